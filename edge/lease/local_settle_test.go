// SPDX-License-Identifier: Apache-2.0

package lease_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/edge/register"
	"github.com/seed96588659/muster/pkg/api"
)

// A long standalone run must not keep one entry per node it ever provisioned: provisioned nodes
// are never discovered again, so a settled node is forgotten once its window has passed.
func TestLocal_SettledNodesAreForgottenAfterTheirWindow(t *testing.T) {
	clk := newClock()
	l := lease.NewLocal(lease.LocalOptions{Settle: time.Minute, LockWindow: 2 * time.Minute, Now: clk.Now})
	ctx := context.Background()
	outcomes := []api.Outcome{api.OutcomeProvisioned, api.OutcomeShutdown, api.OutcomeUpgradeSent, api.OutcomeLockHeld}
	const batches, perBatch = 20, 500
	locked := 0
	for b := range batches {
		ids := make([]string, perBatch)
		for i := range ids {
			ids[i] = fmt.Sprintf("n-%02d-%04d", b, i)
		}
		l.Register(ctx, found(ids...))
		for {
			g, err := l.Acquire(ctx, 256, 0)
			if err != nil {
				t.Fatal(err)
			}
			if g.Lease == nil {
				break
			}
			results := make([]api.NodeResult, len(g.Lease.Nodes))
			for i, id := range g.Lease.Nodes {
				results[i] = api.NodeResult{Identity: id, Outcome: outcomes[i%len(outcomes)]}
				if results[i].Outcome == api.OutcomeLockHeld {
					locked++
				}
			}
			if resp, _ := l.Report(ctx, *g.Lease, results); len(resp.Rejected) != 0 {
				t.Fatalf("report rejected %+v", resp.Rejected)
			}
		}
		clk.Advance(time.Second)
	}
	if got := l.Tracked(); got != batches*perBatch {
		t.Fatalf("tracking %d nodes inside their windows, want %d", got, batches*perBatch)
	}
	clk.Advance(time.Minute)
	if _, err := l.Acquire(ctx, 1, 0); err != nil {
		t.Fatal(err)
	}
	if got := l.Tracked(); got != locked {
		t.Fatalf("tracking %d nodes once the settle window passed, want the %d lock-held ones", got, locked)
	}
	clk.Advance(time.Minute)
	if _, err := l.Register(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := l.Tracked(); got != 0 {
		t.Fatalf("tracking %d nodes once every window passed, want 0", got)
	}
	// Forgotten is as good as settled: a sweep that finds one again queues it.
	if n, _ := l.Register(ctx, found("n-00-0000", "n-00-0003")); n != 2 {
		t.Fatalf("sweep after the windows queued %d, want 2", n)
	}
}

// A node that settled again later (a new boot provisioned once more) keeps its later window:
// its first, earlier window running out forgets nothing.
func TestLocal_ResettledNodeKeepsItsLaterWindow(t *testing.T) {
	clk := newClock()
	l := lease.NewLocal(lease.LocalOptions{Settle: time.Minute, Now: clk.Now})
	ctx := context.Background()
	provision := func() {
		t.Helper()
		ls := mustAcquire(t, l, 1)
		if resp, _ := l.Report(ctx, ls, []api.NodeResult{{Identity: "a", Outcome: api.OutcomeProvisioned}}); len(resp.Applied) != 1 {
			t.Fatalf("report %+v", resp)
		}
	}
	l.Register(ctx, found("a"))
	provision()
	clk.Advance(30 * time.Second)
	l.Register(ctx, []register.Found{{Identity: "a", Event: true}})
	provision()
	clk.Advance(31 * time.Second) // past the first window, inside the second
	if n, _ := l.Register(ctx, found("a")); n != 0 {
		t.Fatalf("sweep inside the second window queued a")
	}
	if got := l.Tracked(); got != 1 {
		t.Fatalf("tracking %d, want a still settling", got)
	}
	clk.Advance(30 * time.Second)
	if n, _ := l.Register(ctx, found("a")); n != 1 {
		t.Fatalf("sweep after the second window queued %d, want 1", n)
	}
}

// A settled node queued again by a startup event is waiting, then leased, when its window runs
// out: it is neither forgotten nor dropped from its lease.
func TestLocal_RequeuedNodeOutlivesItsOldWindow(t *testing.T) {
	clk := newClock()
	l := lease.NewLocal(lease.LocalOptions{Settle: time.Minute, Now: clk.Now})
	ctx := context.Background()
	l.Register(ctx, found("a", "b"))
	ls := mustAcquire(t, l, 2)
	l.Report(ctx, ls, []api.NodeResult{{Identity: "a", Outcome: api.OutcomeProvisioned}, {Identity: "b", Outcome: api.OutcomeProvisioned}})
	l.Register(ctx, []register.Found{{Identity: "a", Event: true}, {Identity: "b", Event: true}})
	a := mustAcquire(t, l, 1)
	clk.Advance(2 * time.Minute)
	if c := l.Counts(); c.Waiting != 1 || c.Leased != 1 {
		t.Fatalf("counts %+v, want 1 waiting and 1 leased", c)
	}
	b := mustAcquire(t, l, 1)
	if len(a.Nodes) != 1 || len(b.Nodes) != 1 || a.Nodes[0] == b.Nodes[0] {
		t.Fatalf("leases %v and %v, want a and b once each", a.Nodes, b.Nodes)
	}
	for _, ls := range []api.Lease{a, b} {
		if resp, _ := l.Report(ctx, ls, []api.NodeResult{{Identity: ls.Nodes[0], Outcome: api.OutcomeFailed}}); len(resp.Applied) != 1 {
			t.Fatalf("report of %v after its old window: %+v", ls.Nodes, resp)
		}
	}
	if got := l.Tracked(); got != 0 {
		t.Fatalf("tracking %d after failed results, want 0", got)
	}
}
