// SPDX-License-Identifier: Apache-2.0

package lease

import (
	"container/heap"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/seed96588659/muster/edge/register"
	"github.com/seed96588659/muster/pkg/api"
)

// LocalOptions configure the standalone source.
type LocalOptions struct {
	Edge   string
	Region string
	// Settle is how long a node that was restarted, upgraded or shut down is not queued again by
	// a discovery sweep (it may still answer for its restart splay); a startup event queues it at
	// once. Default one minute, as choria-provisioner keeps a provisioned host for 60s.
	Settle time.Duration
	// LockWindow is how long a node whose lock another caller held is left alone; default two
	// minutes, go-choria's provisioning lock window.
	LockWindow time.Duration
	// Now is the clock; readings must be monotonic (time.Now).
	Now func() time.Time
	// Changed, when set, is called with the queue's counts after every change.
	Changed func(Counts)
}

// Counts are a source's queue figures: the local queue's, or the region's as the coordinator
// last told them.
type Counts struct {
	// Waiting is how many nodes are queued for a worker.
	Waiting int
	// Leased is how many nodes are handed out and not yet reported.
	Leased int
}

type nodeState int

const (
	stateWaiting nodeState = iota + 1
	stateLeased
	stateSettling // restarted, upgraded, shut down or locked elsewhere: ignore sweeps until settle
)

type localNode struct {
	state nodeState
	until time.Time // stateSettling: ignore discovery sweeps before this
	lease string
}

// Local is the standalone lease source: it leases every discovered node of its region to its
// own edge, and it is that edge's work queue. A node is in the queue at most once: while it
// waits or is being provisioned, discovering it again changes nothing; once its settle window
// has passed it is forgotten, so the queue holds only nodes in flight or recently finished.
// Nodes the edge knew before (register.Found.FirstSeen false: tried again, found again) are leased
// before first-seen ones, so identities invented by the hundred wait behind the fleet.
type Local struct {
	o LocalOptions

	mu       sync.Mutex
	nodes    map[string]*localNode
	known    fifo        // waiting nodes the edge knew before, served first
	fresh    fifo        // waiting first-seen nodes
	settling settleIndex // when each settling node's window ends, soonest first
	leased   int
	seq      uint64
	wake     chan struct{} // closed and replaced when a node starts waiting
}

// settleEntry is one window a node entered; the node may have left it since (queued again by
// an event), or entered a later one, and then the entry is stale.
type settleEntry struct {
	identity string
	until    time.Time
}

// settleIndex is a min-heap of settle windows by end, so the nodes whose windows have passed
// are forgotten in O(log n) each instead of a scan of every node on each call: provisioned
// nodes are never discovered again, and would otherwise stay for the edge's lifetime.
type settleIndex []settleEntry

func (h settleIndex) Len() int           { return len(h) }
func (h settleIndex) Less(i, j int) bool { return h[i].until.Before(h[j].until) }
func (h settleIndex) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *settleIndex) Push(x any)        { *h = append(*h, x.(settleEntry)) }
func (h *settleIndex) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = settleEntry{}
	*h = old[:len(old)-1]
	return e
}

var _ Source = (*Local)(nil)

// NewLocal builds an empty standalone source.
func NewLocal(o LocalOptions) *Local {
	if o.Settle <= 0 {
		o.Settle = time.Minute
	}
	if o.LockWindow <= 0 {
		o.LockWindow = 2 * time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Local{o: o, nodes: make(map[string]*localNode), wake: make(chan struct{})}
}

// Register queues every found node that is not waiting or leased already.
func (l *Local) Register(_ context.Context, found []register.Found) (int, error) {
	now := l.o.Now()
	l.mu.Lock()
	l.forgetSettledLocked(now)
	added := 0
	for _, f := range found {
		if f.Identity == "" {
			continue
		}
		n := l.nodes[f.Identity]
		switch {
		case n == nil:
			n = &localNode{}
			l.nodes[f.Identity] = n
		case n.state == stateWaiting, n.state == stateLeased:
			continue
		case n.state == stateSettling && !f.Event && now.Before(n.until):
			continue
		}
		n.state = stateWaiting
		if f.FirstSeen {
			l.fresh.push(f.Identity)
		} else {
			l.known.push(f.Identity)
		}
		added++
	}
	if added > 0 {
		close(l.wake)
		l.wake = make(chan struct{})
	}
	counts := l.countsLocked()
	l.mu.Unlock()
	l.changed(counts)
	return added, nil
}

// Acquire leases up to max waiting nodes, known ones first, each kind in discovery order,
// waiting up to wait for one.
func (l *Local) Acquire(ctx context.Context, max int, wait time.Duration) (Grant, error) {
	if max <= 0 {
		return Grant{}, fmt.Errorf("acquire: max nodes %d is not positive", max)
	}
	var timeout <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	for {
		l.mu.Lock()
		l.forgetSettledLocked(l.o.Now())
		if l.known.len()+l.fresh.len() > 0 {
			g := l.grantLocked(max)
			counts := l.countsLocked()
			l.mu.Unlock()
			l.changed(counts)
			return g, nil
		}
		wake := l.wake
		l.mu.Unlock()
		if timeout == nil {
			return Grant{}, nil
		}
		select {
		case <-wake:
		case <-timeout:
			return Grant{}, nil
		case <-ctx.Done():
			return Grant{}, ctx.Err()
		}
	}
}

func (l *Local) grantLocked(max int) Grant {
	l.seq++
	ls := &api.Lease{ID: fmt.Sprintf("local-%d", l.seq), Edge: l.o.Edge, Region: l.o.Region, Token: l.seq}
	for len(ls.Nodes) < max && l.known.len()+l.fresh.len() > 0 {
		id := l.known.pop()
		if id == "" {
			id = l.fresh.pop()
		}
		n := l.nodes[id]
		if n == nil || n.state != stateWaiting {
			continue
		}
		n.state, n.lease = stateLeased, ls.ID
		ls.Nodes = append(ls.Nodes, id)
	}
	l.leased += len(ls.Nodes)
	if len(ls.Nodes) == 0 {
		return Grant{}
	}
	return Grant{Lease: ls}
}

// Renew keeps a local lease: it never expires.
func (l *Local) Renew(_ context.Context, ls api.Lease) (Grant, error) { return Grant{Lease: &ls}, nil }

// Report ends each node's lease: provisioned, shut down, upgraded or locked-elsewhere nodes
// settle (discovery sweeps ignore them for a while); the rest are forgotten, so the next sweep
// that finds them queues them again, as choria-provisioner retries on its next cycle.
func (l *Local) Report(_ context.Context, ls api.Lease, results []api.NodeResult) (api.ReportResponse, error) {
	now := l.o.Now()
	var resp api.ReportResponse
	l.mu.Lock()
	for _, r := range results {
		n := l.nodes[r.Identity]
		if n == nil || n.state != stateLeased || n.lease != ls.ID {
			resp.Rejected = append(resp.Rejected, api.RejectedResult{Identity: r.Identity, Reason: "not leased under " + ls.ID})
			continue
		}
		l.leased--
		resp.Applied = append(resp.Applied, r.Identity)
		switch r.Outcome {
		case api.OutcomeProvisioned, api.OutcomeShutdown, api.OutcomeUpgradeSent:
			l.settleLocked(r.Identity, n, now.Add(l.o.Settle))
		case api.OutcomeLockHeld:
			l.settleLocked(r.Identity, n, now.Add(l.o.LockWindow))
		default:
			delete(l.nodes, r.Identity)
		}
	}
	counts := l.countsLocked()
	l.mu.Unlock()
	l.changed(counts)
	return resp, nil
}

// settleLocked makes n settle until until and indexes the window's end.
func (l *Local) settleLocked(id string, n *localNode, until time.Time) {
	n.state, n.until, n.lease = stateSettling, until, ""
	heap.Push(&l.settling, settleEntry{identity: id, until: until})
}

// forgetSettledLocked drops the nodes whose settle window has passed: a sweep that finds one
// again queues it, as it would a settled node past its window.
func (l *Local) forgetSettledLocked(now time.Time) {
	for len(l.settling) > 0 && !now.Before(l.settling[0].until) {
		e := heap.Pop(&l.settling).(settleEntry)
		// Only the node's latest window counts: a node queued again since, or settling anew,
		// is not this entry's to forget.
		if n := l.nodes[e.identity]; n != nil && n.state == stateSettling && n.until.Equal(e.until) {
			delete(l.nodes, e.identity)
		}
	}
}

// Counts reports the queue's figures.
func (l *Local) Counts() Counts {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.countsLocked()
}

func (l *Local) countsLocked() Counts {
	// Every queue entry is a waiting node: Register queues a node only as it starts waiting,
	// and only grantLocked takes it out.
	return Counts{Waiting: l.known.len() + l.fresh.len(), Leased: l.leased}
}

func (l *Local) changed(c Counts) {
	if l.o.Changed != nil {
		l.o.Changed(c)
	}
}
