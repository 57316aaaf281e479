// SPDX-License-Identifier: Apache-2.0

package lease_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/edge/register"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

func newClock() *testkit.Clock { return testkit.NewClock(time.Now()) }

func found(ids ...string) []register.Found {
	out := make([]register.Found, len(ids))
	for i, id := range ids {
		out[i] = register.Found{Identity: id}
	}
	return out
}

func mustAcquire(t *testing.T, l *lease.Local, max int) api.Lease {
	t.Helper()
	g, err := l.Acquire(context.Background(), max, 0)
	if err != nil {
		t.Fatal(err)
	}
	if g.Lease == nil {
		t.Fatal("no lease granted")
	}
	return *g.Lease
}

func TestLocal_NodeIsQueuedAtMostOnce(t *testing.T) {
	l := lease.NewLocal(lease.LocalOptions{Edge: "e", Region: "eu"})
	ctx := context.Background()
	if n, _ := l.Register(ctx, found("a", "b", "a")); n != 2 {
		t.Fatalf("first registration queued %d, want 2", n)
	}
	if n, _ := l.Register(ctx, found("a", "b")); n != 0 {
		t.Fatalf("waiting nodes queued again: %d", n)
	}
	ls := mustAcquire(t, l, 10)
	if len(ls.Nodes) != 2 {
		t.Fatalf("lease has %v, want a and b", ls.Nodes)
	}
	// Being provisioned: found again by a sweep or an event, still not queued.
	if n, _ := l.Register(ctx, []register.Found{{Identity: "a"}, {Identity: "b", Event: true}}); n != 0 {
		t.Fatalf("leased nodes queued again: %d", n)
	}
	if c := l.Counts(); c.Waiting != 0 || c.Leased != 2 {
		t.Fatalf("counts %+v, want 0 waiting and 2 leased", c)
	}
}

func TestLocal_ProvisionedNodeSettlesUntilItBootsAgain(t *testing.T) {
	clk := newClock()
	l := lease.NewLocal(lease.LocalOptions{Edge: "e", Region: "eu", Settle: time.Minute, Now: clk.Now})
	ctx := context.Background()
	l.Register(ctx, found("a", "b"))
	ls := mustAcquire(t, l, 10)
	resp, _ := l.Report(ctx, ls, []api.NodeResult{{Identity: "a", Outcome: api.OutcomeProvisioned}, {Identity: "b", Outcome: api.OutcomeFailed}})
	if len(resp.Applied) != 2 {
		t.Fatalf("report applied %v", resp.Applied)
	}
	// a still answers discovery during its restart splay: a sweep must not queue it again.
	if n, _ := l.Register(ctx, found("a", "b")); n != 1 {
		t.Fatalf("sweep right after the results queued %d, want only the failed b", n)
	}
	// A startup event is a new boot: queue at once.
	if n, _ := l.Register(ctx, []register.Found{{Identity: "a", Event: true}}); n != 1 {
		t.Fatalf("startup event did not queue a settled node")
	}
}

func TestLocal_SettleEndsForSweeps(t *testing.T) {
	clk := newClock()
	l := lease.NewLocal(lease.LocalOptions{Settle: time.Minute, LockWindow: 2 * time.Minute, Now: clk.Now})
	ctx := context.Background()
	l.Register(ctx, found("a", "locked"))
	ls := mustAcquire(t, l, 10)
	l.Report(ctx, ls, []api.NodeResult{{Identity: "a", Outcome: api.OutcomeUpgradeSent}, {Identity: "locked", Outcome: api.OutcomeLockHeld}})
	clk.Advance(61 * time.Second)
	if n, _ := l.Register(ctx, found("a", "locked")); n != 1 {
		t.Fatalf("after settle queued %d, want 1 (the locked node waits for the lock window)", n)
	}
	clk.Advance(time.Minute)
	if n, _ := l.Register(ctx, found("locked")); n != 1 {
		t.Fatalf("after the lock window the node was not queued")
	}
}

func TestLocal_ReportForAnotherLeaseIsRejected(t *testing.T) {
	l := lease.NewLocal(lease.LocalOptions{})
	ctx := context.Background()
	l.Register(ctx, found("a"))
	ls := mustAcquire(t, l, 1)
	other := ls
	other.ID = "local-999"
	resp, _ := l.Report(ctx, other, []api.NodeResult{{Identity: "a", Outcome: api.OutcomeProvisioned}})
	if len(resp.Rejected) != 1 || len(resp.Applied) != 0 {
		t.Fatalf("report under the wrong lease: %+v", resp)
	}
	if c := l.Counts(); c.Leased != 1 {
		t.Fatalf("the node left its lease on a rejected report: %+v", c)
	}
}

func TestLocal_AcquireWaitsForANode(t *testing.T) {
	l := lease.NewLocal(lease.LocalOptions{})
	ctx := context.Background()
	got := make(chan api.Lease, 1)
	go func() {
		g, err := l.Acquire(ctx, 5, time.Minute)
		if err == nil && g.Lease != nil {
			got <- *g.Lease
		}
		close(got)
	}()
	l.Register(ctx, found("late"))
	ls, ok := <-got
	if !ok || len(ls.Nodes) != 1 || ls.Nodes[0] != "late" {
		t.Fatalf("waiting acquire got %+v", ls)
	}
	// With nothing waiting and no wait, acquire answers at once with no lease.
	g, err := l.Acquire(ctx, 5, 0)
	if err != nil || g.Lease != nil {
		t.Fatalf("empty acquire: %+v %v", g, err)
	}
	if _, err := l.Acquire(ctx, 0, 0); err == nil {
		t.Fatal("acquire of 0 nodes was accepted")
	}
}

// choria-provisioner's changelog: a full work queue stalled provisioning; 50,000 waiting nodes
// must just work.
func TestLocal_FiftyThousandWaitingNodes(t *testing.T) {
	l := lease.NewLocal(lease.LocalOptions{})
	ctx := context.Background()
	ids := make([]string, 50000)
	for i := range ids {
		ids[i] = fmt.Sprintf("n-%05d", i)
	}
	if n, _ := l.Register(ctx, found(ids...)); n != 50000 {
		t.Fatalf("queued %d", n)
	}
	seen := map[string]bool{}
	for {
		g, _ := l.Acquire(ctx, 256, 0)
		if g.Lease == nil {
			break
		}
		for _, id := range g.Lease.Nodes {
			if seen[id] {
				t.Fatalf("%s leased twice", id)
			}
			seen[id] = true
		}
		l.Report(ctx, *g.Lease, resultsFor(g.Lease.Nodes))
	}
	if len(seen) != 50000 {
		t.Fatalf("leased %d of 50000", len(seen))
	}
	if c := l.Counts(); c.Waiting != 0 || c.Leased != 0 {
		t.Fatalf("counts after all reported: %+v", c)
	}
}

func resultsFor(ids []string) []api.NodeResult {
	out := make([]api.NodeResult, len(ids))
	for i, id := range ids {
		out[i] = api.NodeResult{Identity: id, Outcome: api.OutcomeProvisioned}
	}
	return out
}

func TestHeld_ValidityCountsFromTheSend(t *testing.T) {
	sent := time.Now()
	l := api.Lease{ID: "l", TTL: api.Duration(10 * time.Second)}
	h := lease.NewHeld(l, sent, time.Second, 2*time.Second)
	if !h.Valid(sent.Add(8*time.Second)) || !h.Deadline().Equal(sent.Add(9*time.Second)) {
		t.Fatalf("a 10s lease held 1s with a 2s margin must be valid until send+9s, deadline %v", h.Deadline().Sub(sent))
	}
	// A renew answered out of order never moves the deadline back.
	h.Renewed(api.Lease{ID: "l", TTL: api.Duration(3 * time.Second)}, sent)
	if !h.Valid(sent.Add(8 * time.Second)) {
		t.Fatal("a shorter renew moved the deadline backwards")
	}
	// Once seen lapsed, a lease stays lost: a renewal answered late brings nothing back.
	if h.Valid(sent.Add(9 * time.Second)) {
		t.Fatal("valid at its deadline")
	}
	h.Renewed(l, sent.Add(8*time.Second))
	if h.Valid(sent.Add(9 * time.Second)) {
		t.Fatal("a lapsed lease came back with a later renewal")
	}
	// A renewal before the deadline moves it to the renewal's send + TTL - margin.
	h2 := lease.NewHeld(l, sent, 0, 2*time.Second)
	h2.Renewed(l, sent.Add(5*time.Second))
	if !h2.Valid(sent.Add(12*time.Second)) || h2.Valid(sent.Add(13*time.Second)) {
		t.Fatal("a renewal sent at +5s of a 10s lease with a 2s margin must hold until +13s")
	}
	if lease.NewHeld(api.Lease{ID: "local"}, sent, 0, time.Second).Valid(sent.Add(1000*time.Hour)) == false {
		t.Fatal("a lease without TTL must never expire")
	}
}

func TestHeld_ANodeLeftOutOfARenewalIsNoLongerHeld(t *testing.T) {
	sent := time.Now()
	l := api.Lease{ID: "l", Nodes: []string{"a", "b"}, TTL: api.Duration(10 * time.Second)}
	h := lease.NewHeld(l, sent, 0, time.Second)
	h.Renewed(api.Lease{ID: "l", TTL: l.TTL}, sent.Add(time.Second))
	if !h.Holds("a") || !h.Holds("b") {
		t.Fatal("an answer without a node list (nil) dropped nodes")
	}
	h.Renewed(api.Lease{ID: "l", Nodes: []string{"a"}, TTL: l.TTL}, sent.Add(2*time.Second))
	if !h.Holds("a") || h.Holds("b") || !h.Valid(sent.Add(5*time.Second)) {
		t.Fatalf("after an answer listing only a: holds a %v, b %v", h.Holds("a"), h.Holds("b"))
	}
	// Answers of one lease may be delivered out of order; a node once left out stays out.
	h.Renewed(l, sent.Add(3*time.Second))
	if h.Holds("b") {
		t.Fatal("a later answer listing b again gave it back")
	}
}

// TestLocal_KnownNodesLeasedBeforeFirstSeenOnes: a node the edge knew before, queued after a
// backlog of first-seen ones (identities a rogue may have invented by the hundred), is leased
// first; each kind keeps its discovery order.
func TestLocal_KnownNodesLeasedBeforeFirstSeenOnes(t *testing.T) {
	l := lease.NewLocal(lease.LocalOptions{Edge: "e", Region: "r"})
	ctx := context.Background()
	if _, err := l.Register(ctx, []register.Found{{Identity: "new-1", FirstSeen: true}, {Identity: "new-2", FirstSeen: true}}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Register(ctx, []register.Found{{Identity: "known-1"}, {Identity: "known-2"}}); err != nil {
		t.Fatal(err)
	}
	g, err := l.Acquire(ctx, 3, 0)
	if err != nil || g.Lease == nil {
		t.Fatalf("acquire: %+v %v", g, err)
	}
	if want := []string{"known-1", "known-2", "new-1"}; !slices.Equal(g.Lease.Nodes, want) {
		t.Fatalf("leased %v, want %v", g.Lease.Nodes, want)
	}
	if c := l.Counts(); c.Waiting != 1 || c.Leased != 3 {
		t.Fatalf("counts %+v, want 1 waiting and 3 leased", c)
	}
}
