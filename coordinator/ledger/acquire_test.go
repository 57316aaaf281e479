// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// reportOf is a report of every node of ls with outcome, under request id rid.
func reportOf(at time.Time, ls *Lease, outcome api.Outcome, rid string) Report {
	c := Report{Now: at, LeaseID: ls.ID, Token: ls.Token, Policy: testPolicy(), Edge: ls.Edge, Region: ls.Region, RequestID: rid, Keep: time.Hour}
	for _, id := range ls.Nodes {
		c.Results = append(c.Results, Result{Identity: id, Outcome: outcome, Error: errIf(outcome)})
	}
	return c
}

func grantOf(at time.Time, id, edge, region string, max int) *Grant {
	return &Grant{Now: at, LeaseID: id, Edge: edge, Region: region, Max: max, TTL: 30 * time.Second, Policy: testPolicy()}
}

// TestAcquire_ReportsThenGrantInOneEntry: the reports apply first, so a node one of them gives
// back is eligible to the grant of the same entry, whose token is the entry's index.
func TestAcquire_ReportsThenGrantInOneEntry(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a", "b", "c", "d")
	first := h.grant(t0, "edge-a", "eu", 2)
	second := h.grant(t0, "edge-a", "eu", 2)
	at := t0.Add(time.Second)

	res := mustResult[*AcquireResult](t, h.apply(&Acquire{
		Reports: []Report{reportOf(at, first, api.OutcomeProvisioned, "r1"), reportOf(at, second, api.OutcomeReleased, "r2")},
		Grant:   grantOf(at, "next", "edge-a", "eu", 5),
	}))
	for i, ls := range []*Lease{first, second} {
		rr, err := res.ReportOf(i)
		if err != nil || !slices.Equal(rr.Applied, ls.Nodes) || !rr.LeaseDone {
			t.Fatalf("report %d: %+v, %v; want every node of %v applied and the lease done", i, rr, err, ls.Nodes)
		}
	}
	g, err := res.GrantOf()
	if err != nil {
		t.Fatal(err)
	}
	// The released nodes went back to waiting before the grant; its lock window is edge-a's own.
	if !slices.Equal(g.Lease.Nodes, second.Nodes) || g.Lease.Token != h.index {
		t.Fatalf("grant %v token %d, want the released %v at the entry's index %d", g.Lease.Nodes, g.Lease.Token, second.Nodes, h.index)
	}
	for _, id := range first.Nodes {
		if n := h.node(id); n.State != api.StateProvisioned {
			t.Fatalf("%s is %s, want provisioned", id, n.State)
		}
	}
	if stamp, err := h.l.LastStamp(); err != nil || !stamp.Equal(at) {
		t.Fatalf("ledger stamp %v (%v) after the acquire, want %v", stamp, err, at)
	}
}

// TestAcquire_EachPartAnsweredOnItsOwn: a report refused whole (its lease unknown) refuses
// neither the next report nor the grant, and leaves nothing behind.
func TestAcquire_EachPartAnsweredOnItsOwn(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a", "b", "c")
	ls := h.grant(t0, "edge-a", "eu", 1)
	bogus := reportOf(t0, &Lease{ID: "nobody", Token: 99, Edge: "edge-a", Region: "eu", Nodes: []string{"b"}}, api.OutcomeProvisioned, "r0")

	res := mustResult[*AcquireResult](t, h.apply(&Acquire{
		Reports: []Report{bogus, reportOf(t0, ls, api.OutcomeProvisioned, "r1")},
		Grant:   grantOf(t0, "next", "edge-a", "eu", 1),
	}))
	if _, err := res.ReportOf(0); !errors.Is(err, ErrUnknownLease) {
		t.Fatalf("report of an unknown lease: %v, want ErrUnknownLease", err)
	}
	if rr, err := res.ReportOf(1); err != nil || rr.Accepted != 1 {
		t.Fatalf("second report: %+v, %v", rr, err)
	}
	if g, err := res.GrantOf(); err != nil || len(g.Lease.Nodes) != 1 {
		t.Fatalf("grant: %+v, %v", g, err)
	}
	if n := h.node("b"); n.State == api.StateProvisioned {
		t.Fatal("the refused report's node was recorded")
	}
}

// TestAcquire_RetryReplaysEveryPart: the same acquire applied again (its answer lost in a
// failover) changes nothing and is answered as the first time.
func TestAcquire_RetryReplaysEveryPart(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a", "b", "c")
	ls := h.grant(t0, "edge-a", "eu", 1)
	cmd := &Acquire{Reports: []Report{reportOf(t0, ls, api.OutcomeProvisioned, "r1")}, Grant: grantOf(t0, "next", "edge-a", "eu", 1)}
	first := mustResult[*AcquireResult](t, h.apply(cmd))
	g1, _ := first.GrantOf()

	cmd.Reports[0].Now, cmd.Grant.Now = t0.Add(time.Second), t0.Add(time.Second)
	again := mustResult[*AcquireResult](t, h.apply(cmd))
	rr, err := again.ReportOf(0)
	if err != nil || !rr.Replayed || !slices.Equal(rr.Applied, ls.Nodes) {
		t.Fatalf("retried report: %+v, %v; want the first answer replayed", rr, err)
	}
	g2, err := again.GrantOf()
	if err != nil || !g2.Replayed || !slices.Equal(g2.Lease.Nodes, g1.Lease.Nodes) {
		t.Fatalf("retried grant: %+v, %v; want the first lease", g2, err)
	}
	if n := h.node(ls.Nodes[0]); n.State != api.StateProvisioned || len(n.History) != 3 {
		t.Fatalf("%s: %s with %d transitions, want provisioned once", ls.Nodes[0], n.State, len(n.History))
	}
}

// TestAcquire_RefusedBelowProtocol6: a member of the build before halts at type 12, so below
// protocol 6 the entry is refused on every member of this build and changes nothing.
func TestAcquire_RefusedBelowProtocol6(t *testing.T) {
	h := newHarnessAt(t, 5)
	h.register(t0, "eu", "a")
	mustErr(t, h.apply(&Acquire{Grant: grantOf(t0, "g", "edge-a", "eu", 1)}), ErrClusterProtocol)
	if n := h.node("a"); n.State != api.StateWaiting {
		t.Fatalf("a is %s after a refused acquire", n.State)
	}
	if ls, err := h.l.Lease("g"); err == nil {
		t.Fatalf("the refused acquire granted %+v", ls)
	}
}

// TestAcquire_RefusesEmptyAndOversized: an acquire with no part, or more reports than the
// limit, is bad input.
func TestAcquire_RefusesEmptyAndOversized(t *testing.T) {
	h := newHarness(t)
	mustErr(t, h.apply(&Acquire{}), ErrBadCommand)
	big := &Acquire{}
	for i := range maxAcquireReports + 1 {
		big.Reports = append(big.Reports, reportOf(t0, &Lease{ID: fmt.Sprint(i), Token: 1, Nodes: []string{"x"}}, api.OutcomeProvisioned, fmt.Sprint(i)))
	}
	mustErr(t, h.apply(big), ErrBadCommand)
}
