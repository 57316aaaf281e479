// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/seed96588659/muster/pkg/api"
)

// lateReport is edge's report of outcome for ids under lease ls, sent after ls may have ended.
func lateReport(at time.Time, ls *Lease, edge string, outcome api.Outcome, ids ...string) *Report {
	c := &Report{Now: at, LeaseID: ls.ID, Token: ls.Token, Policy: testPolicy(), Edge: edge, Region: ls.Region}
	for _, id := range ids {
		c.Results = append(c.Results, Result{Identity: id, Outcome: outcome, Error: errIf(outcome)})
	}
	return c
}

// expireAll expires ls at its end plus grace.
func (h *harness) expireAll(ls *Lease) time.Time {
	h.t.Helper()
	at := ls.ExpiresAt.Add(5 * time.Second)
	exp := mustResult[*ExpireResult](h.t, h.apply(&Expire{Now: at, Grace: 5 * time.Second, Policy: testPolicy(), LeaseIDs: []string{ls.ID}}))
	if !slices.Equal(exp.Expired, []string{ls.ID}) {
		h.t.Fatalf("expire of %s = %+v", ls.ID, exp)
	}
	return at
}

func lastTransition(n *Node) Transition { return n.History[len(n.History)-1] }

// TestLedger_LateProvisionedOfWaitingNodeIsRecorded: an edge cut off past its lease provisioned a
// node inside its own window; its report after the leader expired the lease records the node as
// provisioned, while a failed result of the same ended lease stays refused.
func TestLedger_LateProvisionedOfWaitingNodeIsRecorded(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a", "b")
	l1 := h.grant(t0, "edge-a", "eu", 2)
	at := h.expireAll(l1)
	if n := h.node("a"); n.State != api.StateWaiting {
		t.Fatalf("node a after expiry: %+v", n)
	}

	// Nothing to record: a report of failures under an ended lease is refused as a whole, as before.
	mustErr(t, h.apply(lateReport(at, l1, "edge-a", api.OutcomeFailed, "a")), ErrUnknownLease)

	rep := lateReport(at.Add(time.Second), l1, "edge-a", api.OutcomeProvisioned, "a")
	rep.Results = append(rep.Results, Result{Identity: "b", Outcome: api.OutcomeFailed, Error: "x"})
	rep.RequestID, rep.Keep = "r1", time.Minute
	rr := mustResult[*ReportResult](t, h.apply(rep))
	if rr.Accepted != 1 || !slices.Equal(rr.Applied, []string{"a"}) || len(rr.Rejected) != 1 || !errors.Is(rr.Rejected[0].Err, ErrUnknownLease) {
		t.Fatalf("late report = %+v", rr)
	}
	a := h.node("a")
	tr := lastTransition(a)
	if a.State != api.StateProvisioned || !a.FinishedAt.Equal(at.Add(time.Second)) || a.LeaseID != "" ||
		tr.LeaseID != l1.ID || tr.LeaseToken != l1.Token || tr.Edge != "edge-a" || !strings.Contains(tr.Reason, "late report of lease "+l1.ID) {
		t.Fatalf("node a after its late report: %+v, last transition %+v", a, tr)
	}
	if b := h.node("b"); b.State != api.StateWaiting || b.Attempts != 1 {
		t.Fatalf("node b changed by a failed result of an ended lease: %+v", b)
	}
	if c := h.counts()["eu"]; c[api.StateProvisioned] != 1 || c[api.StateWaiting] != 1 {
		t.Fatalf("counts after the late report: %v", c)
	}
	// A retry is answered from the record; after it, the same late result is not applied twice.
	again := mustResult[*ReportResult](t, h.apply(rep))
	if !again.Replayed || !slices.Equal(again.Applied, []string{"a"}) {
		t.Fatalf("retried late report = %+v", again)
	}
	mustErr(t, h.apply(lateReport(at.Add(2*time.Second), l1, "edge-a", api.OutcomeProvisioned, "a")), ErrUnknownLease)
	if n := h.node("a"); !n.FinishedAt.Equal(at.Add(time.Second)) {
		t.Fatalf("node a rewritten by a second late report: %+v", n)
	}
}

// lateReLeasedScenario: lease l1 of a to edge-a expires, a and b are leased to edge-b (l2), then
// edge-a's late provisioned report of a arrives. The commands carry fixed ids so the scenario can
// be fed to two ledgers with different batch boundaries.
func lateReLeasedScenario() []Command {
	p := testPolicy()
	later := t0.Add(35*time.Second + p.LockWindow + time.Second)
	// Token 3: newHarness applied SetProtocol at 1, the register is 2.
	l1 := &Lease{ID: "l1", Token: 3, Region: "eu"}
	return []Command{
		&Register{Now: t0, Edge: "edge-a", Policy: p, Nodes: []RegisterNode{{Identity: "a", Region: "eu"}}},
		&Grant{Now: t0, LeaseID: "l1", Edge: "edge-a", Region: "eu", Max: 1, TTL: 30 * time.Second, Policy: p},
		&Expire{Now: t0.Add(35 * time.Second), Grace: 5 * time.Second, Policy: p, LeaseIDs: []string{"l1"}},
		&Register{Now: later, Edge: "edge-b", Policy: p, Nodes: []RegisterNode{{Identity: "b", Region: "eu"}}},
		&Grant{Now: later, LeaseID: "l2", Edge: "edge-b", Region: "eu", Max: 2, TTL: 30 * time.Second, Policy: p},
		lateReport(later.Add(time.Second), l1, "edge-a", api.OutcomeProvisioned, "a"),
	}
}

// TestLedger_LateProvisionedTakesTheNodeOutOfANewerLease: the node re-leased to another edge is
// recorded provisioned and leaves that lease; that lease's report of it is refused, its expiry
// skips it, and a lease left empty is removed.
func TestLedger_LateProvisionedTakesTheNodeOutOfANewerLease(t *testing.T) {
	h := newHarness(t)
	results := h.applyAll(lateReLeasedScenario())
	l2 := mustResult[*GrantResult](t, results[4]).Lease
	if !slices.Equal(l2.Nodes, []string{"a", "b"}) {
		t.Fatalf("lease l2 holds %v, want a and b", l2.Nodes)
	}
	rr := mustResult[*ReportResult](t, results[5])
	if !slices.Equal(rr.Applied, []string{"a"}) || len(rr.Rejected) != 0 {
		t.Fatalf("late report = %+v", rr)
	}
	if a := h.node("a"); a.State != api.StateProvisioned || a.LeaseID != "" || a.Edge != "edge-a" || lastTransition(a).From != api.StateLeased {
		t.Fatalf("node a after the late report: %+v", a)
	}
	ls, err := h.l.Lease("l2")
	if err != nil || !slices.Equal(ls.Nodes, []string{"b"}) {
		t.Fatalf("lease l2 after the late report: %+v, %v", ls, err)
	}
	if c := h.counts()["eu"]; c[api.StateProvisioned] != 1 || c[api.StateLeased] != 1 || c[api.StateWaiting] != 0 {
		t.Fatalf("counts after the late report: %v", c)
	}

	// edge-b's calls failed (the node left provisioning mode): refused, the node stays provisioned.
	now := l2.GrantedAt.Add(2 * time.Second)
	st := mustResult[*ReportResult](t, h.apply(lateReport(now, l2, "edge-b", api.OutcomeFailed, "a")))
	if st.Accepted != 0 || len(st.Rejected) != 1 || !errors.Is(st.Rejected[0].Err, ErrNotInLease) {
		t.Fatalf("newer lease's report of the node = %+v", st)
	}
	// Nor may the newer lease claim it provisioned now: the older lease recorded it since its grant.
	st = mustResult[*ReportResult](t, h.apply(lateReport(now, l2, "edge-b", api.OutcomeProvisioned, "a")))
	if st.Accepted != 0 || len(st.Rejected) != 1 || !errors.Is(st.Rejected[0].Err, ErrNotInLease) {
		t.Fatalf("newer lease's provisioned report of the node = %+v", st)
	}
	exp := mustResult[*ExpireResult](t, h.apply(&Expire{Now: l2.ExpiresAt.Add(5 * time.Second), Grace: 5 * time.Second, Policy: testPolicy(), LeaseIDs: []string{"l2"}}))
	if exp.Returned != 1 || exp.Abandoned != 0 {
		t.Fatalf("expiry of l2 = %+v, want only b returned", exp)
	}
	if a, b := h.node("a"), h.node("b"); a.State != api.StateProvisioned || b.State != api.StateWaiting {
		t.Fatalf("after l2 expired: a %s, b %s", a.State, b.State)
	}

	// A newer lease holding only the node: below fenceProtocol it is removed with it; from it on
	// it is kept, holding none, until it expires (fence_test.go), and its report of the node is
	// refused by name.
	for _, v := range []int{fenceProtocol - 1, Protocol} {
		h2 := newHarnessAt(t, v)
		h2.register(t0, "eu", "c")
		l3 := h2.grant(t0, "edge-a", "eu", 1)
		at := h2.expireAll(l3)
		l4 := h2.grant(at.Add(testPolicy().LockWindow), "edge-b", "eu", 1)
		rr = mustResult[*ReportResult](t, h2.apply(lateReport(at.Add(testPolicy().LockWindow), l3, "edge-a", api.OutcomeShutdown, "c")))
		if !slices.Equal(rr.Applied, []string{"c"}) {
			t.Fatalf("protocol %d: late shutdown report = %+v", v, rr)
		}
		if c := h2.node("c"); c.State != api.StateShutdown {
			t.Fatalf("protocol %d: node c after the late shutdown report: %+v", v, c)
		}
		ls, err := h2.l.Lease(l4.ID)
		stale := h2.apply(lateReport(at.Add(testPolicy().LockWindow), l4, "edge-b", api.OutcomeFailed, "c"))
		if v < fenceProtocol {
			if !errors.Is(err, ErrUnknownLease) {
				t.Fatalf("protocol %d: emptied lease %s still present: %v", v, l4.ID, err)
			}
			mustErr(t, stale, ErrUnknownLease)
			continue
		}
		if err != nil || len(ls.Nodes) != 0 || !slices.Equal(ls.Fenced, []string{"c"}) {
			t.Fatalf("protocol %d: emptied lease %s = %+v, %v; want kept fencing c", v, l4.ID, ls, err)
		}
		if st := mustResult[*ReportResult](t, stale); st.Accepted != 0 || len(st.Rejected) != 1 || !errors.Is(st.Rejected[0].Err, ErrNotInLease) {
			t.Fatalf("protocol %d: emptied lease's report of c = %+v", v, st)
		}
	}
}

// TestLedger_LateReportAfterANewerLeaseProvisionedIsRefused: the newer lease's record wins.
func TestLedger_LateReportAfterANewerLeaseProvisionedIsRefused(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a")
	l1 := h.grant(t0, "edge-a", "eu", 1)
	at := h.expireAll(l1).Add(testPolicy().LockWindow)
	l2 := h.grant(at, "edge-b", "eu", 1)
	mustResult[*ReportResult](t, h.apply(lateReport(at, l2, "edge-b", api.OutcomeProvisioned, "a")))
	before := h.node("a")
	mustErr(t, h.apply(lateReport(at.Add(time.Second), l1, "edge-a", api.OutcomeProvisioned, "a")), ErrUnknownLease)
	if n := h.node("a"); !n.FinishedAt.Equal(before.FinishedAt) || lastTransition(n).LeaseID != l2.ID || len(n.History) != len(before.History) {
		t.Fatalf("node a changed by the older lease's late report: %+v", n)
	}
}

// TestLedger_LateReportMustMatchTheGrant: only the lease id, token and edge the node's history
// shows granted may record a late result.
func TestLedger_LateReportMustMatchTheGrant(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a")
	l1 := h.grant(t0, "edge-a", "eu", 1)
	at := h.expireAll(l1)
	forged := *l1
	forged.Token++
	mustErr(t, h.apply(lateReport(at, &forged, "edge-a", api.OutcomeProvisioned, "a")), ErrUnknownLease)
	mustErr(t, h.apply(lateReport(at, l1, "edge-b", api.OutcomeProvisioned, "a")), ErrUnknownLease)
	mustErr(t, h.apply(lateReport(at, l1, "", api.OutcomeProvisioned, "a")), ErrUnknownLease)
	wrongRegion := lateReport(at, l1, "edge-a", api.OutcomeProvisioned, "a")
	wrongRegion.Region = "us"
	mustErr(t, h.apply(wrongRegion), ErrUnknownLease)
	mustErr(t, h.apply(lateReport(at, l1, "edge-a", api.OutcomeProvisioned, "ghost")), ErrUnknownLease)
	if n := h.node("a"); n.State != api.StateWaiting {
		t.Fatalf("node a changed by a forged late report: %+v", n)
	}
}

// TestLedger_LateReportIsDeterministic: two ledgers fed the scenario one entry at a time and in
// one batch end with the same digest.
func TestLedger_LateReportIsDeterministic(t *testing.T) {
	one, batch := newHarness(t), newHarness(t)
	var log []*raft.Log
	for _, c := range lateReLeasedScenario() {
		one.apply(c)
		log = append(log, batch.entry(c))
	}
	for i, r := range batch.l.ApplyLogs(log) {
		if err, ok := r.(error); ok {
			t.Fatalf("entry %d: %v", i+1, err)
		}
	}
	if a := batch.node("a"); a.State != api.StateProvisioned {
		t.Fatalf("node a in the batched ledger: %+v", a)
	}
	d1, err := one.l.Digest()
	if err != nil {
		t.Fatal(err)
	}
	d2, err := batch.l.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(d1, d2) {
		t.Fatal("ledgers fed the same log differ")
	}
}

// TestLedger_LateProvisionedAfterItsLeaseReportedTheNodeIsRefused: edge-a reports node a failed
// under its lease l1 and keeps l1 alive for b; after the lock window a is granted to edge-b (l2).
// edge-a's provisioned report of a under l1 then contradicts what l1 itself recorded: it is not a
// late fact but a stale one, so it is refused, a stays in edge-b's live lease and edge-b's report
// of it is applied.
func TestLedger_LateProvisionedAfterItsLeaseReportedTheNodeIsRefused(t *testing.T) {
	h := newHarness(t)
	lateAfterAReport(t, h)
}

// The same at cluster protocol 1 (a member of the build before it in the cluster): the older
// rule applies, as that member applies it, so no two members' ledgers differ; the node leaves
// edge-b's lease as it did before.
func TestLedger_LateProvisionedAfterItsLeaseReportedTheNodeAtProtocol1IsTheOlderRule(t *testing.T) {
	h := newProtocol1Harness(t)
	lateAfterAReport(t, h)
}

// lateAfterAReport: edge-a reports a failed under l1, keeps l1 for b, and after the lock window a
// is granted to edge-b under l2; then edge-a reports a provisioned (or shut down) under l1.
func lateAfterAReport(t *testing.T, h *harness) {
	t.Helper()
	proto, err := h.l.ClusterProtocol()
	if err != nil {
		t.Fatal(err)
	}
	h.register(t0, "eu", "a", "b")
	l1 := h.grant(t0, "edge-a", "eu", 2)
	mustResult[*ReportResult](t, h.apply(lateReport(t0.Add(time.Second), l1, "edge-a", api.OutcomeFailed, "a")))
	later := t0.Add(3 * time.Minute)
	for at := t0.Add(20 * time.Second); at.Before(later); at = at.Add(20 * time.Second) {
		mustResult[*RenewResult](t, h.apply(&Renew{Now: at, LeaseID: l1.ID, Token: l1.Token, TTL: 30 * time.Second}))
	}
	l2 := h.grant(later, "edge-b", "eu", 1)
	if l2 == nil || !slices.Equal(l2.Nodes, []string{"a"}) {
		t.Fatalf("edge-b's grant: %+v", l2)
	}
	if proto < lateRuleProtocol {
		rr := mustResult[*ReportResult](t, h.apply(lateReport(later.Add(time.Second), l1, "edge-a", api.OutcomeProvisioned, "a")))
		if !slices.Equal(rr.Applied, []string{"a"}) {
			t.Fatalf("at protocol 1 edge-a's late provisioned report of a = %+v, want it applied as the older build does", rr)
		}
		if a := h.node("a"); a.State != api.StateProvisioned {
			t.Fatalf("node a at protocol 1: %+v", a)
		}
		return
	}
	for _, o := range []api.Outcome{api.OutcomeProvisioned, api.OutcomeShutdown} {
		rr := mustResult[*ReportResult](t, h.apply(lateReport(later.Add(time.Second), l1, "edge-a", o, "a")))
		if rr.Accepted != 0 || len(rr.Rejected) != 1 || !errors.Is(rr.Rejected[0].Err, ErrNotInLease) {
			t.Fatalf("edge-a's %s report of a after it reported a failed = %+v", o, rr)
		}
	}
	if a := h.node("a"); a.State != api.StateLeased || a.LeaseID != l2.ID || a.LeaseToken != l2.Token {
		t.Fatalf("node a left edge-b's lease: %+v", a)
	}
	if ls, err := h.l.Lease(l2.ID); err != nil || !slices.Equal(ls.Nodes, []string{"a"}) {
		t.Fatalf("lease l2 after the stale report: %+v, %v", ls, err)
	}
	rr := mustResult[*ReportResult](t, h.apply(lateReport(later.Add(2*time.Second), l2, "edge-b", api.OutcomeProvisioned, "a")))
	if !slices.Equal(rr.Applied, []string{"a"}) || !rr.LeaseDone {
		t.Fatalf("edge-b's report of a = %+v", rr)
	}
}

// TestLedger_LateResultAfterItsLeaseReportedAnyOutcomeIsRefused: whatever the lease recorded for
// the node (here before the lease ended), a provisioned or shutdown result of that lease arriving
// afterwards is refused, and the node keeps what it became; the ledger cannot tell which of two
// answers of one lease is the truth, and the one it applied already moved the node on.
func TestLedger_LateResultAfterItsLeaseReportedAnyOutcomeIsRefused(t *testing.T) {
	for _, first := range []api.Outcome{api.OutcomeFailed, api.OutcomeUpgradeSent, api.OutcomeLockHeld, api.OutcomeReleased, api.OutcomeDeferred, api.OutcomeGone} {
		t.Run(string(first), func(t *testing.T) {
			h := newHarness(t)
			h.register(t0, "eu", "a", "b")
			l1 := h.grant(t0, "edge-a", "eu", 2)
			mustResult[*ReportResult](t, h.apply(lateReport(t0.Add(time.Second), l1, "edge-a", first, "a")))
			at := h.expireAll(l1) // l1 still held b
			before := h.node("a")
			mustErr(t, h.apply(lateReport(at.Add(time.Second), l1, "edge-a", api.OutcomeProvisioned, "a")), ErrUnknownLease)
			if n := h.node("a"); n.State != before.State || len(n.History) != len(before.History) || !n.FinishedAt.Equal(before.FinishedAt) {
				t.Fatalf("node a after %s then a late provisioned of the same lease: %+v (was %+v)", first, n, before)
			}
		})
	}
}

// TestLedger_LateProvisionedAfterTheExpiryAbandonedTheNodeIsRecorded: the lease's expiry is not a
// result of the lease; a node it abandoned (its last attempt) still takes the late fact.
func TestLedger_LateProvisionedAfterTheExpiryAbandonedTheNodeIsRecorded(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a")
	var ls *Lease
	at := t0
	for h.node("a").State != api.StateAbandoned {
		if ls = h.grant(at, "edge-a", "eu", 1); ls == nil {
			t.Fatalf("node a not granted at %s: %+v", at, h.node("a"))
		}
		at = h.expireAll(ls).Add(testPolicy().BackoffMax)
	}
	if tr := lastTransition(h.node("a")); tr.LeaseID != ls.ID || !strings.HasPrefix(tr.Reason, "lease expired; abandoned") {
		t.Fatalf("abandoning transition %+v", tr)
	}
	rr := mustResult[*ReportResult](t, h.apply(lateReport(at, ls, "edge-a", api.OutcomeProvisioned, "a")))
	if !slices.Equal(rr.Applied, []string{"a"}) {
		t.Fatalf("late report = %+v", rr)
	}
	if a := h.node("a"); a.State != api.StateProvisioned || lastTransition(a).From != api.StateAbandoned {
		t.Fatalf("node a after the late report: %+v", a)
	}
}

// TestLedger_LateResultKeepsAnotherEdgesLiveLock: edge-a's lease of a expires; after its lock
// window a is granted to edge-b, whose call fails, so go-choria's lock is edge-b's for a full
// window. edge-a's late provisioned report then records the fact, but must not take that window
// from edge-b: when a is sighted in provisioning mode again inside it, only edge-b may be offered
// it. edge-a's own lock ended a window after its lease did, which the expiry recorded and edge-b's
// grant waited for. Below lateLockProtocol the late result takes the window, as the builds
// before did, so every member of a mixed cluster applies the same.
func TestLedger_LateResultKeepsAnotherEdgesLiveLock(t *testing.T) {
	for _, v := range []int{lateLockProtocol - 1, Protocol} {
		t.Run(fmt.Sprintf("protocol %d", v), func(t *testing.T) {
			h := newHarnessAt(t, v)
			p := testPolicy()
			h.register(t0, "eu", "a")
			l1 := h.grant(t0, "edge-a", "eu", 1)
			at := h.expireAll(l1).Add(p.LockWindow)
			l2 := h.grant(at, "edge-b", "eu", 1)
			if l2 == nil || !slices.Equal(l2.Nodes, []string{"a"}) {
				t.Fatalf("edge-b's grant after edge-a's window: %+v", l2)
			}
			failed := at.Add(time.Second)
			mustResult[*ReportResult](t, h.apply(lateReport(failed, l2, "edge-b", api.OutcomeFailed, "a")))
			rr := mustResult[*ReportResult](t, h.apply(lateReport(failed.Add(time.Second), l1, "edge-a", api.OutcomeProvisioned, "a")))
			if !slices.Equal(rr.Applied, []string{"a"}) {
				t.Fatalf("edge-a's late provisioned report of a = %+v", rr)
			}
			a := h.node("a")
			if v < lateLockProtocol {
				if a.LockEdge != "edge-a" || !a.LockUntil.Equal(failed.Add(time.Second).Add(p.LockWindow)) {
					t.Fatalf("protocol %d: node a's lock = %s until %s, want the older rule's edge-a", v, a.LockEdge, a.LockUntil)
				}
				return
			}
			if a.State != api.StateProvisioned || a.LockEdge != "edge-b" || !a.LockUntil.Equal(failed.Add(p.LockWindow)) {
				t.Fatalf("node a after the late report: %s, lock %s until %s; want edge-b's until %s", a.State, a.LockEdge, a.LockUntil, failed.Add(p.LockWindow))
			}
			sighted := failed.Add(p.ReprovisionAfter + 5*time.Second)
			h.register(sighted, "eu", "a")
			if l := h.grant(sighted, "edge-a", "eu", 1); l != nil && len(l.Nodes) > 0 {
				t.Fatalf("edge-a granted %v inside edge-b's lock window", l.Nodes)
			}
			if l := h.grant(sighted, "edge-b", "eu", 1); l == nil || !slices.Equal(l.Nodes, []string{"a"}) {
				t.Fatalf("edge-b, the lock's holder, was granted %+v", l)
			}
		})
	}
}

// TestLedger_LateProvisionedAfterAMoveIsRecorded: the operator moved a node to another region after
// its lease expired; that lease's late provisioned result names the lease's region, which was the
// node's at the grant, so it is recorded (the node is provisioned in its new region), while a
// report naming a region the node was not in at the grant is refused (an ended lease with nothing
// to record: unknown lease). Below lateMoveProtocol the
// report's region is compared with the node's region now, as the builds before applied it.
func TestLedger_LateProvisionedAfterAMoveIsRecorded(t *testing.T) {
	for _, v := range []int{lateMoveProtocol - 1, lateMoveProtocol} {
		h := newHarnessAt(t, v)
		h.register(t0, "eu", "a")
		l1 := h.grant(t0, "edge-a", "eu", 1)
		at := h.expireAll(l1)
		if r := h.operator(at, VerbMove, "us", "a"); !slices.Equal(r.Done, []string{"a"}) {
			t.Fatalf("protocol %d: move: %+v", v, r)
		}
		if r := h.operator(at, VerbMove, "asia", "a"); !slices.Equal(r.Done, []string{"a"}) {
			t.Fatalf("protocol %d: second move: %+v", v, r)
		}
		wrong := lateReport(at, l1, "edge-a", api.OutcomeProvisioned, "a")
		wrong.Region = "us"
		mustErr(t, h.apply(wrong), ErrUnknownLease)
		res := h.apply(lateReport(at, l1, "edge-a", api.OutcomeProvisioned, "a"))
		if v < lateMoveProtocol {
			mustErr(t, res, ErrUnknownLease)
			if n := h.node("a"); n.State != api.StateWaiting {
				t.Fatalf("protocol %d: a after the refused late result: %s", v, n.State)
			}
			continue
		}
		if r := mustResult[*ReportResult](t, res); !slices.Equal(r.Applied, []string{"a"}) {
			t.Fatalf("protocol %d: late result after the move: %+v", v, r)
		}
		if n := h.node("a"); n.State != api.StateProvisioned || n.Region != "asia" || n.LockEdge != "edge-a" {
			t.Fatalf("protocol %d: a after the late result: %+v", v, n)
		}
	}
}
