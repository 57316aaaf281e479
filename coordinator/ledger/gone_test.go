// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

const goneError = "no answer to inventory; rediscovery: not in provisioning mode"

// goneReport is edge's gone result for id under lease ls.
func goneReport(at time.Time, ls *Lease, edge, id string) *Report {
	return &Report{Now: at, LeaseID: ls.ID, Token: ls.Token, Policy: testPolicy(), Edge: edge, Region: ls.Region,
		Results: []Result{{Identity: id, Outcome: api.OutcomeGone, Error: goneError}}}
}

// goneAfterTwoExpiries leases node a twice to edge-a, letting both leases expire (two attempts
// counted, one short of testPolicy's MaxAttempts), then leases it to edge-b, whose gone report
// the caller applies. It returns edge-a's second lease (the one whose result never arrived) and
// edge-b's.
func goneAfterTwoExpiries(h *harness) (earlier, last *Lease) {
	h.t.Helper()
	h.register(t0, "eu", "a")
	first := h.grant(t0, "edge-a", "eu", 1)
	at := h.expireAll(first)
	earlier = h.grant(at.Add(time.Minute), "edge-a", "eu", 1)
	at = h.expireAll(earlier).Add(testPolicy().LockWindow)
	last = h.grant(at, "edge-b", "eu", 1)
	if earlier == nil || last == nil || h.node("a").Attempts != 2 {
		h.t.Fatalf("setup: leases %+v %+v, node %+v", earlier, last, h.node("a"))
	}
	return earlier, last
}

// TestLedger_GoneIsFinalAndCountsNoAttempt: a gone result under the lease that holds the node
// makes it gone, finished, with the result's error, no attempt counted (here the attempt that
// would abandon it), out of its lease and out of every later grant.
func TestLedger_GoneIsFinalAndCountsNoAttempt(t *testing.T) {
	h := newHarness(t)
	_, ls := goneAfterTwoExpiries(h)
	at := ls.GrantedAt.Add(3 * time.Second)
	rr := mustResult[*ReportResult](t, h.apply(goneReport(at, ls, "edge-b", "a")))
	if !slices.Equal(rr.Applied, []string{"a"}) || !rr.LeaseDone {
		t.Fatalf("gone report = %+v", rr)
	}
	a := h.node("a")
	tr := lastTransition(a)
	if a.State != api.StateGone || a.Attempts != 2 || !a.FinishedAt.Equal(at) || a.LastError != goneError || a.LeaseID != "" || a.LeaseToken != 0 {
		t.Fatalf("node a after its gone report: %+v", a)
	}
	if tr.From != api.StateLeased || tr.To != api.StateGone || !strings.Contains(tr.Reason, "out of provisioning mode") ||
		tr.LeaseID != ls.ID || tr.LeaseToken != ls.Token || tr.Edge != "edge-b" || tr.Error != goneError {
		t.Fatalf("gone transition %+v", tr)
	}
	if c := h.counts()["eu"]; c[api.StateGone] != 1 || c[api.StateLeased] != 0 || c[api.StateAbandoned] != 0 {
		t.Fatalf("counts after the gone report: %v", c)
	}
	if _, err := h.l.Lease(ls.ID); !errors.Is(err, ErrUnknownLease) {
		t.Fatalf("lease %s still present after its last node went: %v", ls.ID, err)
	}
	nodes, _, err := h.l.Nodes(NodeFilter{State: api.StateGone})
	if err != nil || len(nodes) != 1 || nodes[0].Identity != "a" {
		t.Fatalf("nodes in state gone: %+v, %v", nodes, err)
	}
	for _, edge := range []string{"edge-a", "edge-b"} {
		if got := h.grant(at.Add(time.Hour), edge, "eu", 1); got != nil {
			t.Fatalf("gone node granted to %s: %+v", edge, got)
		}
	}
}

// TestLedger_GoneNodeWaitsAgainOnlyAfterReprovisionAfter: discovery seeing a gone node in
// provisioning mode makes it wait again (attempts and error cleared) under the rule finished
// nodes follow, so a sweep that ran before the gone report does not bounce it straight back.
func TestLedger_GoneNodeWaitsAgainOnlyAfterReprovisionAfter(t *testing.T) {
	h := newHarness(t)
	_, ls := goneAfterTwoExpiries(h)
	at := ls.GrantedAt.Add(3 * time.Second)
	mustResult[*ReportResult](t, h.apply(goneReport(at, ls, "edge-b", "a")))

	if r := h.register(at.Add(time.Second), "eu", "a"); r.Requeued != 0 {
		t.Fatalf("register right after the gone report = %+v", r)
	}
	if a := h.node("a"); a.State != api.StateGone {
		t.Fatalf("node a bounced back by an early sweep: %+v", a)
	}
	back := at.Add(testPolicy().ReprovisionAfter)
	if r := h.register(back, "eu", "a"); r.Requeued != 1 {
		t.Fatalf("register after reprovision_after = %+v", r)
	}
	a := h.node("a")
	tr := lastTransition(a)
	if a.State != api.StateWaiting || a.Attempts != 0 || a.LastError != "" || tr.From != api.StateGone || tr.Reason != "seen again in provisioning mode" {
		t.Fatalf("node a seen again: %+v, last transition %+v", a, tr)
	}
	if got := h.grant(back.Add(testPolicy().LockWindow), "edge-a", "eu", 1); got == nil || !slices.Equal(got.Nodes, []string{"a"}) {
		t.Fatalf("node a seen again is not granted: %+v", got)
	}
}

// TestLedger_LateResultOfTheEarlierGrantOverridesGone: gone says "we do not know what
// happened"; a late provisioned or shutdown result of the lease under which the node left
// provisioning mode is the fact, and is recorded over it.
func TestLedger_LateResultOfTheEarlierGrantOverridesGone(t *testing.T) {
	for _, o := range []api.Outcome{api.OutcomeProvisioned, api.OutcomeShutdown} {
		t.Run(string(o), func(t *testing.T) {
			h := newHarness(t)
			earlier, ls := goneAfterTwoExpiries(h)
			at := ls.GrantedAt.Add(3 * time.Second)
			mustResult[*ReportResult](t, h.apply(goneReport(at, ls, "edge-b", "a")))

			rr := mustResult[*ReportResult](t, h.apply(lateReport(at.Add(time.Second), earlier, "edge-a", o, "a")))
			if !slices.Equal(rr.Applied, []string{"a"}) {
				t.Fatalf("late %s report = %+v", o, rr)
			}
			want := map[api.Outcome]api.NodeState{api.OutcomeProvisioned: api.StateProvisioned, api.OutcomeShutdown: api.StateShutdown}[o]
			a := h.node("a")
			tr := lastTransition(a)
			if a.State != want || a.LastError != "" || !a.FinishedAt.Equal(at.Add(time.Second)) || tr.From != api.StateGone || tr.LeaseID != earlier.ID ||
				!strings.Contains(tr.Reason, "late report of lease "+earlier.ID) {
				t.Fatalf("node a after the late %s report: %+v, last transition %+v", o, a, tr)
			}
			if c := h.counts()["eu"]; c[api.StateGone] != 0 || c[want] != 1 {
				t.Fatalf("counts after the late report: %v", c)
			}
		})
	}
}

// TestLedger_GoneIsNeverAppliedLate: a gone result under a lease that no longer holds the node
// is refused like a failed one, alone or beside a late provisioned result it travels with.
func TestLedger_GoneIsNeverAppliedLate(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a", "b")
	l1 := h.grant(t0, "edge-a", "eu", 2)
	at := h.expireAll(l1)
	mustErr(t, h.apply(goneReport(at, l1, "edge-a", "a")), ErrUnknownLease)
	if a := h.node("a"); a.State != api.StateWaiting || a.Attempts != 1 {
		t.Fatalf("node a changed by a gone result of an expired lease: %+v", a)
	}

	mixed := lateReport(at, l1, "edge-a", api.OutcomeProvisioned, "a")
	mixed.Results = append(mixed.Results, Result{Identity: "b", Outcome: api.OutcomeGone, Error: goneError})
	rr := mustResult[*ReportResult](t, h.apply(mixed))
	if !slices.Equal(rr.Applied, []string{"a"}) || len(rr.Rejected) != 1 || rr.Rejected[0].Identity != "b" || !errors.Is(rr.Rejected[0].Err, ErrUnknownLease) {
		t.Fatalf("late provisioned and gone report = %+v", rr)
	}
	if b := h.node("b"); b.State != api.StateWaiting {
		t.Fatalf("node b changed by a gone result of an expired lease: %+v", b)
	}

	// Under a live lease that no longer holds the node (its gone result already applied).
	h2 := newHarness(t)
	h2.register(t0, "eu", "c", "d")
	l2 := h2.grant(t0, "edge-a", "eu", 2)
	mustResult[*ReportResult](t, h2.apply(goneReport(t0.Add(time.Second), l2, "edge-a", "c")))
	st := mustResult[*ReportResult](t, h2.apply(goneReport(t0.Add(2*time.Second), l2, "edge-a", "c")))
	if st.Accepted != 0 || len(st.Rejected) != 1 || !errors.Is(st.Rejected[0].Err, ErrNotInLease) {
		t.Fatalf("second gone report of c = %+v", st)
	}
	if c := h2.node("c"); !c.FinishedAt.Equal(t0.Add(time.Second)) || len(c.History) != 3 {
		t.Fatalf("node c rewritten by a second gone report: %+v", c)
	}
}

// TestLedger_GoneAfterAStaleSightingKeepsTheNodesResult: a node provisioned under one lease is
// queued again by a sighting made before that result (an edge stopped between its freshness
// check and its send delivers it late), leased, and found out of provisioning mode: from
// protocol 3 it is provisioned again, its recorded result standing, not gone; at protocol 2 it
// is gone, as the older build applies it.
func TestLedger_GoneAfterAStaleSightingKeepsTheNodesResult(t *testing.T) {
	for _, v := range []int{staleSightingProtocol - 1, Protocol} {
		h := newHarnessAt(t, v)
		h.register(t0, "eu", "a")
		l1 := h.grant(t0, "edge-a", "eu", 1)
		h.report(t0.Add(time.Second), l1, api.OutcomeProvisioned, "a")
		at := t0.Add(time.Second + testPolicy().ReprovisionAfter + time.Second)
		if r := h.register(at, "eu", "a"); r.Requeued != 1 {
			t.Fatalf("protocol %d: the stale sighting did not requeue: %+v", v, r)
		}
		l2 := h.grant(at, "edge-a", "eu", 1)
		h.report(at.Add(time.Second), l2, api.OutcomeGone, "a")
		n := h.node("a")
		if v < staleSightingProtocol {
			if n.State != api.StateGone {
				t.Fatalf("protocol %d: a after gone: %+v", v, n)
			}
			continue
		}
		tr := lastTransition(n)
		if n.State != api.StateProvisioned || tr.From != api.StateLeased || tr.LeaseID != l2.ID || !strings.Contains(tr.Reason, "stale") || !n.FinishedAt.Equal(at.Add(time.Second)) {
			t.Fatalf("protocol %d: a after gone following a stale sighting: %+v, last %+v", v, n, tr)
		}
	}
}
