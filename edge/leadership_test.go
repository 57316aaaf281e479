// SPDX-License-Identifier: Apache-2.0

package edge_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/metrics"
	"github.com/seed96588659/muster/pkg/testkit"
)

// ballot is an election whose outcomes the test decides: each value sent on results is handed
// to the edge, and acked once the edge's callback returned.
type ballot struct {
	results chan bool
	acked   chan struct{}
}

func newBallot() *ballot { return &ballot{results: make(chan bool), acked: make(chan struct{})} }

func (b *ballot) Campaign(ctx context.Context, changed func(leading bool)) error {
	for {
		select {
		case l := <-b.results:
			changed(l)
			b.acked <- struct{}{}
		case <-ctx.Done():
			return nil
		}
	}
}

func (b *ballot) set(t *testing.T, leading bool) {
	t.Helper()
	select {
	case b.results <- leading:
	case <-time.After(10 * time.Second):
		t.Fatal("the edge does not campaign")
	}
	<-b.acked
}

// TestEdge_ProvisionsOnlyWhileItLeadsTheElection: an edge with leader election starts as a
// candidate, halted like a paused one (no sweep, no host, paused gauge 1); winning sweeps at
// once and provisions; losing stops the host in flight at its next attempt boundary and halts
// the edge again; winning again sweeps at once and finishes it.
func TestEdge_ProvisionsOnlyWhileItLeadsTheElection(t *testing.T) {
	f := &finder{ids: []string{"a", "slow"}}
	inFlight := make(chan struct{}, 1)
	fl := newFlow(func(ctx context.Context, h hostflow.Host) hostflow.Result {
		if h.Identity != "slow" {
			return hostflow.Result{Outcome: hostflow.Provisioned}
		}
		select {
		case inFlight <- struct{}{}:
		default:
			return hostflow.Result{Outcome: hostflow.Provisioned} // its second run
		}
		for !h.Pause.Paused() { // an attempt boundary every few milliseconds
			if ctx.Err() != nil {
				return hostflow.Result{Outcome: hostflow.Failed, Err: ctx.Err()}
			}
			time.Sleep(5 * time.Millisecond)
		}
		return hostflow.Result{Outcome: hostflow.Paused, Err: fmt.Errorf("provisioning %s is paused", h.Identity)}
	})
	b := newBallot()
	reg := metrics.New()
	src := &acquireCounter{Local: lease.NewLocal(lease.LocalOptions{Edge: "e", Region: "r"})}
	e, _ := run(t, edge.Options{Site: "s", Workers: 2, Interval: time.Hour, Flow: fl, Finder: f, Metrics: reg, Leadership: b, Mode: edge.Standalone(src)})
	testkit.WaitFor(t, 10*time.Second, "the edge running", e.Ready)

	if got := pausedGauge(t, reg, "s"); got != 1 {
		t.Errorf("paused gauge %v of a candidate, want 1", got)
	}
	if got := e.Election(); got != edge.ElectionCandidate {
		t.Errorf("Election() %q before the edge won, want %q", got, edge.ElectionCandidate)
	}
	if n, out, acq := f.sweeps.Load(), e.Stats().Outcomes, src.acquires.Load(); n != 0 || out[hostflow.Provisioned] != 0 || acq != 0 {
		t.Fatalf("a candidate swept %d times, acquired %d times and provisioned %d nodes", n, acq, out[hostflow.Provisioned])
	}

	b.set(t, true)
	testkit.WaitFor(t, 10*time.Second, "a sweep at once, a provisioned and slow in flight", func() (bool, string) {
		return f.sweeps.Load() == 1 && e.Stats().Outcomes[hostflow.Provisioned] == 1 && len(inFlight) == 1,
			fmt.Sprintf("sweeps %d, outcomes %v, slow in flight %v", f.sweeps.Load(), e.Stats().Outcomes, len(inFlight) == 1)
	})
	if got := pausedGauge(t, reg, "s"); got != 0 {
		t.Errorf("paused gauge %v of the leader, want 0", got)
	}
	if got := e.Election(); got != edge.ElectionLeader {
		t.Errorf("Election() %q after the edge won, want %q", got, edge.ElectionLeader)
	}

	b.set(t, false)
	testkit.WaitFor(t, 10*time.Second, "slow stopped at its next attempt boundary", func() bool {
		return e.Stats().Outcomes[hostflow.Paused] == 1
	})
	if got := pausedGauge(t, reg, "s"); got != 1 {
		t.Errorf("paused gauge %v after the edge lost, want 1", got)
	}
	e.Resume() // the operator's resume does not lift the election's halt
	if got := pausedGauge(t, reg, "s"); got != 1 {
		t.Errorf("paused gauge %v after an operator's resume of an edge that does not lead, want 1", got)
	}
	if n := f.sweeps.Load(); n != 1 {
		t.Errorf("%d sweeps after the edge lost, want none since it won", n-1)
	}

	b.set(t, true)
	testkit.WaitFor(t, 10*time.Second, "a sweep at once and slow provisioned", func() (bool, string) {
		return f.sweeps.Load() == 2 && e.Stats().Outcomes[hostflow.Provisioned] == 2,
			fmt.Sprintf("sweeps %d, outcomes %v", f.sweeps.Load(), e.Stats().Outcomes)
	})
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if fl.runs["a"] != 1 {
		t.Errorf("a ran %d times, want once", fl.runs["a"])
	}
}

// acquireCounter counts acquires: a lease is taken only by one, standalone or from the coordinators.
type acquireCounter struct {
	*lease.Local
	acquires atomic.Int64
}

func (s *acquireCounter) Acquire(ctx context.Context, max int, wait time.Duration) (lease.Grant, error) {
	s.acquires.Add(1)
	return s.Local.Acquire(ctx, max, wait)
}

// An edge without leader election is never a candidate.
func TestEdge_WithoutLeaderElectionNoElection(t *testing.T) {
	e, _ := run(t, edge.Options{Site: "s", Workers: 1, Interval: time.Hour, Flow: newFlow(provisioned), Finder: &finder{ids: []string{"a"}}})
	testkit.WaitFor(t, 10*time.Second, "a provisioned", func() bool { return e.Stats().Outcomes[hostflow.Provisioned] == 1 })
	if got := e.Election(); got != "" {
		t.Fatalf("Election() %q without leader election", got)
	}
}
