// SPDX-License-Identifier: Apache-2.0

package lessor

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/pkg/api"
)

// carriedReport is a report of every node of ls provisioned, under request id rid.
func carriedReport(ls *ledger.Lease, rid string) Carried {
	c := Carried{Ref: Ref{ID: ls.ID, Token: ls.Token, Edge: ls.Edge, Region: ls.Region}, RequestID: rid}
	for _, id := range ls.Nodes {
		c.Results = append(c.Results, ledger.Result{Identity: id, Outcome: api.OutcomeProvisioned})
	}
	return c
}

// atProtocol raises the cluster protocol of d's ledger to v.
func atProtocol(t *testing.T, d *direct, v int) {
	t.Helper()
	if _, err := d.propose(context.Background(), &ledger.SetProtocol{Version: v}); err != nil {
		t.Fatal(err)
	}
}

// acquireCarrying is edge e's acquire of one node of eu under request id rid, carrying reports.
func acquireCarrying(t *testing.T, m *Manager, ctx context.Context, rid string, wait time.Duration, reports ...Carried) Acquired {
	t.Helper()
	got, err := m.Acquire(ctx, Request{Edge: "e", Region: "eu", MaxNodes: 1, RequestID: rid, Wait: wait, Reports: reports})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Reports) != len(reports) {
		t.Fatalf("%d answers to %d carried reports", len(got.Reports), len(reports))
	}
	return got
}

// TestManager_CarriedReportRidesTheGrantsEntry: from cluster protocol 6 a report carried by an
// acquire that is granted at once and the grant are one log entry; below it, two.
func TestManager_CarriedReportRidesTheGrantsEntry(t *testing.T) {
	for _, tc := range []struct {
		protocol, entries int
	}{{ledger.AcquireProtocol, 1}, {ledger.AcquireProtocol - 1, 2}} {
		m, d, _ := enabledManager(t, "a", "b")
		atProtocol(t, d, tc.protocol)
		_, first := firstLease(t, m)
		before := d.index

		got := acquireCarrying(t, m, context.Background(), "req-2", 0, carriedReport(first, "rep-1"))
		if d.index-before != uint64(tc.entries) {
			t.Fatalf("protocol %d: %d log entries for a report and a grant, want %d", tc.protocol, d.index-before, tc.entries)
		}
		if a := got.Reports[0]; a.Err != nil || !slices.Equal(a.Result.Applied, first.Nodes) {
			t.Fatalf("protocol %d: carried report answered %+v", tc.protocol, a)
		}
		if got.Lease == nil || len(got.Lease.Nodes) != 1 || got.Lease.Nodes[0] == first.Nodes[0] {
			t.Fatalf("protocol %d: granted %+v", tc.protocol, got.Lease)
		}
		if n, _ := d.l.Node(first.Nodes[0]); n.State != api.StateProvisioned {
			t.Fatalf("protocol %d: %s is %s after its carried report", tc.protocol, first.Nodes[0], n.State)
		}
	}
}

// TestManager_CarriedReportIsNotHeldByTheLongPoll: with nothing eligible the carried results are
// applied at once, not when the long poll ends, and answered with the lease that ends it.
func TestManager_CarriedReportIsNotHeldByTheLongPoll(t *testing.T) {
	m, d, clock := enabledManager(t, "a")
	atProtocol(t, d, ledger.Protocol)
	_, first := firstLease(t, m)
	d.applied = make(chan ledger.Command, 16)

	done := make(chan Acquired, 1)
	go func() {
		got, err := m.Acquire(context.Background(), Request{Edge: "e", Region: "eu", MaxNodes: 1, RequestID: "req-2", Wait: time.Hour, Reports: []Carried{carriedReport(first, "rep-1")}})
		if err != nil {
			t.Error(err)
		}
		done <- got
	}()
	cmd := <-d.applied
	if a, ok := cmd.(*ledger.Acquire); !ok || a.Grant != nil || len(a.Reports) != 1 {
		t.Fatalf("first entry of the waiting acquire: %T %+v, want the report alone", cmd, cmd)
	}
	if n, _ := d.l.Node("a"); n.State != api.StateProvisioned {
		t.Fatalf("a is %s while the acquire waits", n.State)
	}
	select {
	case got := <-done:
		t.Fatalf("the acquire returned before anything was eligible: %+v", got)
	default:
	}
	if _, err := d.propose(context.Background(), &ledger.Register{Now: clock.Now(), Policy: m.cfg.Policy, Nodes: []ledger.RegisterNode{{Identity: "b", Region: "eu"}}}); err != nil {
		t.Fatal(err)
	}
	got := <-done
	if got.Lease == nil || !slices.Equal(got.Lease.Nodes, []string{"b"}) || len(got.Reports) != 1 || got.Reports[0].Err != nil || got.Reports[0].Result.Accepted != 1 {
		t.Fatalf("acquire answered %+v", got)
	}
}

// TestManager_CarriedReportAppliedWhilePaused: a paused cluster grants nothing but still records
// the results an acquire carries.
func TestManager_CarriedReportAppliedWhilePaused(t *testing.T) {
	m, d, clock := enabledManager(t, "a", "b")
	atProtocol(t, d, ledger.Protocol)
	_, first := firstLease(t, m)
	if _, err := d.propose(context.Background(), &ledger.Pause{Now: clock.Now(), Paused: true}); err != nil {
		t.Fatal(err)
	}
	got := acquireCarrying(t, m, context.Background(), "req-2", time.Hour, carriedReport(first, "rep-1"))
	if !got.Paused || got.Lease != nil || got.Reports[0].Err != nil || got.Reports[0].Result.Accepted != 1 {
		t.Fatalf("paused acquire answered %+v", got)
	}
}

// TestManager_CarriedReportOfAnUnknownLeaseIsItsOwnAnswer: a carried report refused whole is
// answered with its refusal; the grant goes on.
func TestManager_CarriedReportOfAnUnknownLeaseIsItsOwnAnswer(t *testing.T) {
	m, d, _ := enabledManager(t, "a")
	atProtocol(t, d, ledger.Protocol)
	bogus := carriedReport(&ledger.Lease{ID: "gone", Token: 7, Edge: "e", Region: "eu", Nodes: []string{"a"}}, "rep-1")
	got := acquireCarrying(t, m, context.Background(), "req-1", 0, bogus)
	if !ledger.Refused(got.Reports[0].Err) || got.Lease == nil {
		t.Fatalf("acquire answered %+v", got)
	}
}

// TestManager_CarriedAcquireIsGrantedWhatItsReportsGaveBack: an acquire without a wait whose
// reports give back the only node is granted it (its edge holds the lock window): it looks again
// after proposing the reports alone, every time, rather than return empty on a coin toss.
func TestManager_CarriedAcquireIsGrantedWhatItsReportsGaveBack(t *testing.T) {
	for i := range 20 {
		m, d, _ := enabledManager(t, "a")
		atProtocol(t, d, ledger.Protocol)
		_, first := firstLease(t, m)
		back := carriedReport(first, "rep-1")
		back.Results[0].Outcome = api.OutcomeReleased
		got := acquireCarrying(t, m, context.Background(), "req-2", 0, back)
		if got.Lease == nil || !slices.Equal(got.Lease.Nodes, []string{"a"}) {
			t.Fatalf("try %d: acquire answered %+v, want node a granted again", i, got)
		}
	}
}
