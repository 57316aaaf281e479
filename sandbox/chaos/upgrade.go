// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/sandbox/stack/previous"
)

// memberBackWithin bounds the wait for a restarted member to be a caught-up voter again.
const memberBackWithin = 90 * time.Second

// raiseWithin bounds the wait for the cluster protocol to rise once every member runs this build:
// the leader asks the members every 2 s.
const raiseWithin = 30 * time.Second

// rollingUpgrade restarts the members one at a time (followers first, the leader last, as
// docs/upgrades.md says), then the edges, on this build. The first time, the run was on the
// previous build: a watch fails the fault if any member reads a cluster protocol above the
// previous build's while a member still runs it, and the fault waits for the raise to this
// build's once all do. Later draws find every member on this build: the members are restarted
// on it again, and each edge goes to the previous build and back (an edge of either build
// talks to the cluster).
func (in *injector) rollingUpgrade(ctx context.Context, ev *Event) {
	r, c := in.r, in.r.cluster
	ev.Target, ev.Start = "every member, then every edge", time.Now()
	leader, err := c.WaitLeader(ctx, len(c.Members), "")
	if err != nil {
		ev.Err = err
		return
	}
	order := slices.DeleteFunc(slices.Clone(c.Members), func(m *Member) bool { return m == leader })
	order = append(order, leader)
	var notes []string
	// onPrevious changes only here, under the coordinator faults' lock (as member-downgrade reads it).
	if r.onPrevious {
		note, err := in.upgradeMembers(ctx, order)
		notes = append(notes, note)
		if err != nil {
			ev.Err, ev.Detail = err, note
			return
		}
		r.onPrevious = false
	} else {
		for _, m := range order {
			if ev.Err = in.restartMember(ctx, m, m.Bin()); ev.Err != nil {
				return
			}
		}
		notes = append(notes, "the cluster ran this build already: members restarted on it, each edge on the previous build and back")
		for _, e := range r.edges {
			if ev.Err = in.restartEdge(ctx, e, filepath.Join(r.bins.previous, previous.Edge)); ev.Err != nil {
				return
			}
		}
	}
	for _, e := range r.edges {
		if ev.Err = in.restartEdge(ctx, e, filepath.Join(r.bins.current, "muster-edge")); ev.Err != nil {
			return
		}
	}
	names := make([]string, len(order))
	for i, m := range order {
		names[i] = m.ID
	}
	notes = append(notes, fmt.Sprintf("members %s then %d edges restarted one at a time", strings.Join(names, ", "), len(r.edges)))
	ev.Detail = strings.Join(notes, "; ")
}

// upgradeMembers restarts the members in order from the previous build on this one, watching
// every member's cluster protocol, and waits for the raise; it says what the watch saw.
func (in *injector) upgradeMembers(ctx context.Context, order []*Member) (string, error) {
	c := in.r.cluster
	w, err := newProtocolWatch(ctx, c)
	if err != nil {
		return "", err
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); w.run(wctx, c) }()
	for _, m := range order {
		w.upgrading(m.ID)
		if err = in.restartMember(ctx, m, filepath.Join(in.r.bins.current, "muster-coordinator")); err != nil {
			break
		}
	}
	if err == nil {
		err = w.waitRaised(ctx, c)
	}
	stop()
	<-done
	if v := w.violation(); v != "" {
		err = errors.Join(err, errors.New(v))
	}
	return w.String(), err
}

// restartMember stops m (SIGTERM), starts it on bin and waits until it is a caught-up voter.
func (in *injector) restartMember(ctx context.Context, m *Member, bin string) error {
	if err := m.Stop(); err != nil {
		return fmt.Errorf("member %s: stop: %w", m.ID, err)
	}
	m.Use(bin)
	if err := m.Restart(ctx); err != nil {
		return err
	}
	return in.r.cluster.WaitMember(ctx, m, memberBackWithin)
}

// restartEdge stops e (SIGTERM: it gives its hosts back), starts it on bin and waits for its
// /readyz. No other fault holds e meanwhile.
func (in *injector) restartEdge(ctx context.Context, e *Edge, bin string) error {
	if err := in.takeEdge(ctx, e); err != nil {
		return err
	}
	defer in.releaseEdge(e)
	if err := e.Proc.Stop(20 * time.Second); err != nil {
		return fmt.Errorf("edge %s: stop: %w", e.Name, err)
	}
	e.Proc.Bin = bin
	e.Restarts++
	return e.Start(ctx)
}

// wipeMember does what a StatefulSet does with a lost volume: SIGKILL a member (the leader half
// the time), delete its data directory and start it again with the same id and addresses and
// --join the other members; nothing else is done by hand. The fault ends when the member is a
// caught-up voter again, so later rounds run with it back.
func (in *injector) wipeMember(ctx context.Context, ev *Event, rng *rand.Rand) {
	c := in.r.cluster
	m := c.Members[rng.IntN(len(c.Members))]
	role := "a follower"
	if l, err := c.WaitLeader(ctx, len(c.Members), ""); err == nil {
		if rng.IntN(2) == 0 {
			m = l
		}
		if m == l {
			role = "the leader"
		}
	}
	ev.Target, ev.Start = m.ID, time.Now()
	if ev.Err = m.Kill(); ev.Err != nil {
		return
	}
	if err := os.RemoveAll(m.DataDir); err != nil {
		ev.Err = fmt.Errorf("member %s: delete its data directory: %w", m.ID, err)
		return
	}
	var join []string
	for _, o := range c.Members {
		if o != m {
			join = append(join, o.API)
		}
	}
	m.JoinVia(join)
	if ev.Err = m.Restart(ctx); ev.Err != nil {
		return
	}
	if ev.Err = c.WaitMember(ctx, m, memberBackWithin); ev.Err == nil {
		ev.Detail = fmt.Sprintf("%s; data directory deleted; a caught-up voter again after %s", role, time.Since(ev.Start).Round(time.Millisecond))
	}
}

// downgradeMember restarts the highest follower on the previous build once the cluster runs this build's
// protocol, as an operator rolling back one member would. The downgrade must be refused with a
// clear message: the previous build exits saying it needs a newer muster-coordinator, or (a
// build whose ledger file check predates protocol 7: it halts only at a protocol entry it has
// not applied yet) the leader refuses its join ("upgrade it first"). The cluster protocol must
// not move; the round's checks hold it to no loss. Then the member is upgraded again.
func (in *injector) downgradeMember(ctx context.Context, ev *Event) {
	r, c := in.r, in.r.cluster
	if r.onPrevious {
		ev.Target, ev.Start, ev.Detail = "no member", time.Now(), "the members run the previous build still: nothing to downgrade"
		return
	}
	leader, err := c.WaitLeader(ctx, len(c.Members), "")
	if err != nil {
		ev.Err = err
		return
	}
	st, err := c.StatusOf(ctx, leader)
	if err != nil {
		ev.Err = err
		return
	}
	// The highest follower, as a StatefulSet rolls back its highest ordinal first; also one that
	// starts with --join. c1 starts with --bootstrap: at protocol 6 (d4fbca1) a downgraded c1
	// logs nothing at all and runs on the ledger it has, so it cannot be told from a healthy one.
	var m *Member
	for _, o := range c.Members {
		if o != leader {
			m = o
		}
	}
	ev.Target, ev.Start = m.ID, time.Now()
	current := m.Bin()
	if ev.Err = m.Stop(); ev.Err != nil {
		return
	}
	logStart := logSize(m.LogPath)
	m.Use(filepath.Join(r.bins.previous, previous.Coordinator))
	startErr := m.Restart(ctx)
	var refusal string
	ev.Err = waitFor(ctx, "member "+m.ID+" on the previous build refused", 60*time.Second, func() (bool, string) {
		refusal = downgradeRefusal(readFrom(m.LogPath, logStart))
		return refusal != "", fmt.Sprintf("running %v, start %v; no refusal in its log", m.Running(), startErr)
	})
	if ev.Err != nil {
		return
	}
	kept := "it exited"
	if m.Running() {
		kept = "it kept running on the ledger it has"
	}
	ev.Detail = fmt.Sprintf("on the previous build (cluster protocol %d): %s; %s", st.ClusterProtocol, refusal, kept)
	for _, o := range c.Members {
		if !o.Running() {
			continue
		}
		ost, err := c.StatusOf(ctx, o)
		if err != nil {
			ev.Err = err
			return
		}
		if ost.ClusterProtocol != st.ClusterProtocol {
			ev.Err = fmt.Errorf("member %s reads cluster protocol %d after the downgrade of %s, %d before", o.ID, ost.ClusterProtocol, m.ID, st.ClusterProtocol)
			return
		}
	}
	ev.Err = in.restartMember(ctx, m, current)
}

// downgradeRefusal is the line of a member's log that says its build may not run on the
// cluster, "" when there is none.
func downgradeRefusal(log string) string {
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "needs a newer muster-coordinator") || strings.Contains(line, "upgrade it first") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// logSize is the size of the file at path, 0 when there is none.
func logSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// readFrom is the file at path from offset on, "" when it cannot be read.
func readFrom(path string, offset int64) string {
	b, err := os.ReadFile(path)
	if err != nil || int64(len(b)) < offset {
		return ""
	}
	return string(b[offset:])
}

// protocolWatch reads every running member's status while the members move from the previous
// build to this one, and records a member that reads a cluster protocol above the previous
// build's while another still runs it.
type protocolWatch struct {
	previous, current int // the builds' protocols, from the members' status

	mu       sync.Mutex
	old      map[string]bool // members not yet started on this build
	reads    int
	bad      string
	raisedAt time.Time
	last     string // the member whose upgrade came last before the raise
}

// newProtocolWatch reads the protocol every member announces (all on the previous build).
func newProtocolWatch(ctx context.Context, c *Cluster) (*protocolWatch, error) {
	w := &protocolWatch{old: map[string]bool{}}
	for _, m := range c.Members {
		st, err := c.StatusOf(ctx, m)
		if err != nil {
			return nil, err
		}
		w.old[m.ID] = true
		if w.previous == 0 || st.Protocol < w.previous {
			w.previous = st.Protocol
		}
		if st.ClusterProtocol > st.Protocol {
			return nil, fmt.Errorf("member %s reads cluster protocol %d above its own %d before the upgrade", m.ID, st.ClusterProtocol, st.Protocol)
		}
	}
	return w, nil
}

// upgrading notes that member id starts on this build from now on.
func (w *protocolWatch) upgrading(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.old, id)
	w.last = id
}

// run polls every running member until ctx ends.
func (w *protocolWatch) run(ctx context.Context, c *Cluster) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		for _, m := range c.Members {
			if !m.Running() {
				continue
			}
			st, err := c.StatusOf(ctx, m)
			if err != nil {
				continue
			}
			w.observe(m.ID, st)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// observe checks one member's status against the builds the members run.
func (w *protocolWatch) observe(id string, st api.StatusResponse) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reads++
	if st.ClusterProtocol > w.previous && len(w.old) > 0 && w.bad == "" {
		var old []string
		for o := range w.old {
			old = append(old, o)
		}
		slices.Sort(old)
		w.bad = fmt.Sprintf("member %s reads cluster protocol %d while %s still run the previous build (protocol %d)", id, st.ClusterProtocol, strings.Join(old, ", "), w.previous)
	}
	if len(w.old) == 0 && st.Protocol > w.current {
		w.current = st.Protocol
	}
}

func (w *protocolWatch) violation() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.bad
}

// waitRaised waits until every member reads this build's protocol as the cluster's, once
// checkProtocols accepts the two builds.
func (w *protocolWatch) waitRaised(ctx context.Context, c *Cluster) error {
	for _, m := range c.Members {
		st, err := c.StatusOf(ctx, m)
		if err != nil {
			return err
		}
		w.observe(m.ID, st)
	}
	w.mu.Lock()
	cur, prev := w.current, w.previous
	w.mu.Unlock()
	if err := checkProtocols(prev, cur); err != nil {
		return err
	}
	err := waitFor(ctx, fmt.Sprintf("cluster protocol %d on every member", cur), raiseWithin, func() (bool, string) {
		for _, m := range c.Members {
			st, err := c.StatusOf(ctx, m)
			if err != nil {
				return false, err.Error()
			}
			if st.ClusterProtocol != cur {
				return false, fmt.Sprintf("member %s reads %d", m.ID, st.ClusterProtocol)
			}
		}
		return true, ""
	})
	if err == nil {
		w.mu.Lock()
		w.raisedAt = time.Now()
		w.mu.Unlock()
	}
	return err
}

// checkProtocols refuses a previous build that is not at the protocol just below this build's:
// the upgrade would not test the last raise, and previous.Commit must move.
func checkProtocols(prev, cur int) error {
	if cur != prev+1 {
		return fmt.Errorf("the previous build (%s) announces cluster protocol %d and this one %d: previous.Commit must name the last commit at protocol %d",
			previous.Commit[:12], prev, cur, cur-1)
	}
	return nil
}

// String says what the watch saw: the raise, and after which member.
func (w *protocolWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.raisedAt.IsZero() {
		return fmt.Sprintf("cluster protocol not raised from %d (%d status reads)", w.previous, w.reads)
	}
	return fmt.Sprintf("cluster protocol %d -> %d once the last member (%s) ran this build; never above %d before (%d status reads)",
		w.previous, w.current, w.last, w.previous, w.reads)
}
