// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// TestLedger_NodeTakenOutOfALiveLeaseStaysFencedUntilThatLeaseEnds: a late result of an expired
// lease takes node a out of edge-b's live lease l2; edge-b may go on acting on a until its own
// count of l2 ends, so a sighting must not make a eligible again before l2 has ended on the
// leader's count (expiry), however long l2 is renewed, and l2 is kept after its last node is
// reported so that it still fences a.
func TestLedger_NodeTakenOutOfALiveLeaseStaysFencedUntilThatLeaseEnds(t *testing.T) {
	h := newHarness(t)
	results := h.applyAll(lateReLeasedScenario())
	l2 := mustResult[*GrantResult](t, results[4]).Lease
	if rr := mustResult[*ReportResult](t, results[5]); !slices.Equal(rr.Applied, []string{"a"}) {
		t.Fatalf("late report = %+v", rr)
	}
	p := testPolicy()
	now := l2.GrantedAt
	renew := func(at time.Time) *Lease {
		t.Helper()
		return mustResult[*RenewResult](t, h.apply(&Renew{Now: at, LeaseID: l2.ID, Token: l2.Token, TTL: 30 * time.Second, Edge: "edge-b", Region: "eu"})).Lease
	}
	// edge-b renews l2 past reprovision_after; a is seen in provisioning mode (edge-b works on it).
	for now.Before(l2.GrantedAt.Add(p.ReprovisionAfter + 5*time.Second)) {
		now = now.Add(10 * time.Second)
		if ls := renew(now); !slices.Equal(ls.Nodes, []string{"b"}) {
			t.Fatalf("renewal of l2 lists %v, want only b", ls.Nodes)
		}
	}
	if rr := h.register(now, "eu", "a"); rr.Requeued != 0 || h.node("a").State != api.StateProvisioned {
		t.Fatalf("a sighting while l2 lives requeued a: %+v, node %+v", rr, h.node("a"))
	}
	if g := mustResult[*GrantResult](t, h.apply(&Grant{Now: now, LeaseID: "l3", Edge: "edge-a", Region: "eu", Max: 5, TTL: 30 * time.Second, Policy: p})); g.Lease != nil {
		t.Fatalf("a granted while l2 may still be counted by edge-b: %+v", g.Lease)
	}

	// l2's last node is reported: the lease stays, holding none, and still fences a.
	rr := mustResult[*ReportResult](t, h.apply(lateReport(now, l2, "edge-b", api.OutcomeProvisioned, "b")))
	if !slices.Equal(rr.Applied, []string{"b"}) {
		t.Fatalf("report of b under l2 = %+v", rr)
	}
	ls, err := h.l.Lease(l2.ID)
	if err != nil || len(ls.Nodes) != 0 || !slices.Equal(ls.Fenced, []string{"a"}) {
		t.Fatalf("l2 after its last node was reported: %+v, %v; want kept, holding none, fencing a", ls, err)
	}
	if rr := h.register(now.Add(time.Second), "eu", "a"); rr.Requeued != 0 {
		t.Fatalf("a requeued while l2 lives with no node: %+v", rr)
	}

	// l2 ends on the leader's count: a is released, and the next sighting requeues it.
	exp := mustResult[*ExpireResult](t, h.apply(&Expire{Now: ls.ExpiresAt.Add(5 * time.Second), Grace: 5 * time.Second, Policy: p, LeaseIDs: []string{l2.ID}}))
	if !slices.Equal(exp.Expired, []string{l2.ID}) {
		t.Fatalf("expiry of l2 = %+v", exp)
	}
	if _, err := h.l.Lease(l2.ID); !errors.Is(err, ErrUnknownLease) {
		t.Fatalf("l2 after its expiry: %v", err)
	}
	after := ls.ExpiresAt.Add(6 * time.Second)
	if rr := h.register(after, "eu", "a"); rr.Requeued != 1 {
		t.Fatalf("a sighting after l2 ended: %+v, want a requeued", rr)
	}
	// edge-b may have called a until l2 ended, so go-choria's lock is edge-b's a lock window
	// after that, as for a node l2 still held at its expiry (seeds 10986 and 18966 of the
	// simulator: a grant to another edge inside that window).
	if n := h.node("a"); n.LockEdge != "edge-b" || n.LockUntil.Before(ls.ExpiresAt.Add(p.LockWindow)) {
		t.Fatalf("a after l2 ended: lock %s until %s, want edge-b's until l2's end + the lock window (%s)", n.LockEdge, n.LockUntil, ls.ExpiresAt.Add(p.LockWindow))
	}
	if g := mustResult[*GrantResult](t, h.apply(&Grant{Now: after, LeaseID: "l4", Edge: "edge-a", Region: "eu", Max: 5, TTL: 30 * time.Second, Policy: p})); g.Lease != nil {
		t.Fatalf("a granted to edge-a inside edge-b's lock window: %+v", g.Lease)
	}
	free := ls.ExpiresAt.Add(p.LockWindow + time.Second)
	g := mustResult[*GrantResult](t, h.apply(&Grant{Now: free, LeaseID: "l5", Edge: "edge-a", Region: "eu", Max: 5, TTL: 30 * time.Second, Policy: p}))
	if g.Lease == nil || !slices.Equal(g.Lease.Nodes, []string{"a"}) {
		t.Fatalf("grant after l2's lock window: %+v, want a", g.Lease)
	}
}
