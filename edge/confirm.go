// SPDX-License-Identifier: Apache-2.0

package edge

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/rpc"
)

// confirmer settles restarts, upgrades and shutdowns that got no reply. After such a request the
// agent answers nothing more until its process is replaced, so retrying cannot tell whether it
// was accepted; looking for the node again can. Once ConfirmAfter has passed, a node that still
// answers discovery in provisioning mode did not act on the request (failed); one that is gone
// did: it restarted into its configuration, left to upgrade, or shut down.
//
// Such a result is reported only once discovery settled it. Reported as a failure while unknown,
// it would end its lease's hold on the node in the ledger, which then refuses the late
// provisioned result the truth turns out to be (a lease that recorded a result may not record
// another): the node reads failed, then gone, though it was provisioned. So a result that cannot
// be confirmed (the edge stops first, or discovery keeps failing) is withheld: the lease lets go
// of it by expiry, which leaves the late result open, its journal intent stays open, and it is
// settled like a replayed intent, by this run once discovery answers or by the next run.
type confirmer struct {
	confirmDeps

	out  chan leased
	done chan struct{}

	mu      sync.Mutex
	waiting []due
	closed  bool
	wake    chan struct{}
}

// confirmDeps are what the confirmer uses of the edge.
type confirmDeps struct {
	finder    Finder
	now       func() time.Time
	after     time.Duration // ConfirmAfter
	confirms  *prometheus.CounterVec
	unsettled func(ids ...string) // Mode.unsettled
}

type due struct {
	res leased
	at  time.Time
}

func newConfirmer(d confirmDeps) *confirmer {
	return &confirmer{confirmDeps: d, out: make(chan leased, 1024), done: make(chan struct{}), wake: make(chan struct{}, 1)}
}

// add settles res once ConfirmAfter has passed, the restart splay and a process start, or at
// once when the unanswered call was the flow's first (nothing was sent that takes time to act).
func (c *confirmer) add(res leased) {
	wait := c.after
	if !rpc.LeavesProvisioning(res.Step) {
		wait = 0
	}
	c.addAt(res, c.now().Add(wait))
}

// addAt settles res by rediscovery at (on the edge's clock).
func (c *confirmer) addAt(res leased, at time.Time) {
	c.mu.Lock()
	c.waiting = append(c.waiting, due{res: res, at: at})
	c.mu.Unlock()
	c.poke()
}

// close lets the confirmer finish once everything waiting is settled.
func (c *confirmer) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.poke()
}

func (c *confirmer) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *confirmer) run() {
	defer close(c.done)
	for {
		c.mu.Lock()
		now := c.now()
		var ready []due
		rest := c.waiting[:0]
		for _, d := range c.waiting {
			// Once the edge stops, nothing waits: what is not due yet is settled by settle(stopping).
			if c.closed || !now.Before(d.at) {
				ready = append(ready, d)
			} else {
				rest = append(rest, d)
			}
		}
		c.waiting = rest
		closed, empty := c.closed, len(rest) == 0
		next := time.Second
		if !empty {
			next = max(rest[0].at.Sub(now), 10*time.Millisecond)
		}
		c.mu.Unlock()

		if len(ready) > 0 {
			c.settle(ready, closed)
			continue
		}
		if closed && empty {
			return
		}
		t := time.NewTimer(next)
		select {
		case <-t.C:
		case <-c.wake:
		}
		t.Stop()
	}
}

// sweepTries bounds the rediscoveries tried for one result before its lease lets go of it.
const sweepTries = 3

func (c *confirmer) settle(ready []due, stopping bool) {
	if stopping {
		for _, d := range ready {
			res := d.res
			switch {
			case res.replayed:
				// Its lease is a previous run's: the intent stays open for the next run.
			case rpc.LeavesProvisioning(res.Step):
				c.withhold(res, "the edge stopped before confirming it")
			default:
				res.Outcome = hostflow.Failed
				res.Err = fmt.Errorf("%s got no reply and the edge stopped before confirming it", res.Step)
				c.out <- res
			}
		}
		return
	}
	ids := make([]string, len(ready))
	for i, d := range ready {
		ids[i] = d.res.Identity
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	present, err := c.finder.Sweep(ctx, ids...)
	cancel()
	still := make(map[string]bool, len(present))
	for _, id := range present {
		still[id] = true
	}
	for _, d := range ready {
		res := d.res
		switch {
		case err != nil && (res.sweeps+1 < sweepTries || res.replayed):
			// A broker that failed the sweep says nothing about the node: look again later. A
			// replayed intent holds no lease, so it is looked for until discovery answers.
			res.sweeps++
			c.confirms.WithLabelValues("error").Inc()
			c.addAt(res, c.now().Add(c.after))
			continue
		case err != nil && rpc.LeavesProvisioning(res.Step):
			c.confirms.WithLabelValues("error").Inc()
			c.withhold(res, fmt.Sprintf("discovery failed %d times (%v)", sweepTries, err))
			// Settled later under its lease id and token, as the next run would from the journal.
			again := res
			again.lease, again.run, again.replayed, again.sweeps = lease.Ended(res.lease.Lease()), nil, true, 0
			c.addAt(again, c.now().Add(c.after))
			c.unsettled(res.Identity)
			continue
		case err != nil:
			// Nothing that takes the node out of provisioning mode was sent: it is still there.
			res.Outcome = hostflow.Failed
			res.Err = fmt.Errorf("%s got no reply and could not be confirmed by discovery (%d sweeps): %w", res.Step, sweepTries, err)
			c.confirms.WithLabelValues("error").Inc()
		case still[res.Identity]:
			res.Outcome = hostflow.Failed
			res.Err = fmt.Errorf("%s got no reply and the node is still in provisioning mode", res.Step)
			c.confirms.WithLabelValues("present").Inc()
		default:
			res.Outcome, res.Err = hostflow.Settled(res.Step), nil
			if res.Outcome == hostflow.Gone {
				res.Err = fmt.Errorf("%s got no reply and discovery no longer finds the node in provisioning mode", res.Step)
			}
			c.confirms.WithLabelValues("gone").Inc()
		}
		c.out <- res
	}
}

// withhold hands the reporter res unreported: its lease lets go of the node without a result.
func (c *confirmer) withhold(res leased, why string) {
	res.withheld = true
	res.Err = fmt.Errorf("%s got no reply and was not confirmed: %s", res.Step, why)
	c.confirms.WithLabelValues("withheld").Inc()
	c.out <- res
}
