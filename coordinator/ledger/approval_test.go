// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

const dupError = "duplicate_responder: a second responder answered configure for a; nothing it returned is used"

func (h *harness) registerWith(at time.Time, a *Approval, region string, ids ...string) *RegisterResult {
	h.t.Helper()
	p := testPolicy()
	p.HistoryLimit = 20
	c := &Register{Now: at, Edge: "edge-a", Policy: p, Approval: a}
	for _, id := range ids {
		c.Nodes = append(c.Nodes, RegisterNode{Identity: id, Region: region})
	}
	return mustResult[*RegisterResult](h.t, h.apply(c))
}

// provision grants node id to edge and reports it provisioned at at, with a history long enough
// for the flapping count.
func (h *harness) provision(at time.Time, edge, region, id string) {
	h.t.Helper()
	p := testPolicy()
	p.HistoryLimit = 20
	g := &Grant{Now: at, LeaseID: fmt.Sprintf("lease-%d", h.index+1), Edge: edge, Region: region, Max: 1, TTL: 30 * time.Second, Policy: p}
	ls := mustResult[*GrantResult](h.t, h.apply(g)).Lease
	if ls == nil || !slices.Equal(ls.Nodes, []string{id}) {
		h.t.Fatalf("grant of %s: %+v", id, ls)
	}
	rep := &Report{Now: at, LeaseID: ls.ID, Token: ls.Token, Policy: p, Results: []Result{{Identity: id, Outcome: api.OutcomeProvisioned}}}
	mustResult[*ReportResult](h.t, h.apply(rep))
}

func protocolHarness(t *testing.T, v int) *harness {
	h := openHarness(t, Options{})
	mustResult[*ProtocolResult](t, h.apply(&SetProtocol{Version: v}))
	return h
}

// TestApproval_ManualRegionHoldsFirstSeenNodesUntilApproved: a first-seen node of a manual region
// is held, never granted, counted as held, in the audit and the events with the edge that saw it;
// another region's node waits as before; approved, the node is granted.
func TestApproval_ManualRegionHoldsFirstSeenNodesUntilApproved(t *testing.T) {
	h := newHarness(t)
	a := &Approval{Manual: []string{"eu"}}
	if r := h.registerWith(t0, a, "eu", "a"); len(r.Held) != 1 || r.Added != 1 || !slices.Equal(r.Final, []string{"a"}) {
		t.Fatalf("register in eu: %+v", r)
	}
	h.registerWith(t0, a, "us", "b")
	n := h.node("a")
	if n.State != api.StateHeld || n.HoldReason != api.HoldManual || n.HoldEdge != "edge-a" || !n.HeldAt.Equal(t0) {
		t.Fatalf("a: %+v", n)
	}
	if b := h.node("b"); b.State != api.StateWaiting {
		t.Fatalf("b of a region not in approval.manual: %s", b.State)
	}
	if g := h.grant(t0, "edge-a", "eu", 5); g != nil {
		t.Fatalf("a held node was granted: %+v", g)
	}
	if c := h.counts()["eu"][api.StateHeld]; c != 1 {
		t.Fatalf("held count %d", c)
	}
	audit, err := h.l.Audit(10)
	if err != nil || len(audit) != 1 || audit[0].Verb != VerbHold || audit[0].By != "edge-a" || !strings.HasPrefix(audit[0].Reason, api.HoldManual) {
		t.Fatalf("audit: %+v %v", audit, err)
	}
	events, _, err := h.l.Events(api.EventPosition{}, 100)
	if err != nil || !slices.ContainsFunc(events, func(e api.Event) bool {
		return e.Identity == "a" && e.To == api.StateHeld && strings.Contains(e.Reason, "held: manual")
	}) {
		t.Fatalf("no held event: %+v %v", events, err)
	}
	// Seen again, it stays held (and is in Final, so its edge registers it at its next sighting).
	if r := h.registerWith(t0.Add(time.Minute), a, "eu", "a"); len(r.Held) != 0 || !slices.Equal(r.Final, []string{"a"}) {
		t.Fatalf("a held node seen again: %+v", r)
	}
	at := t0.Add(2 * time.Minute)
	if r := h.operator(at, VerbApprove, "", "a"); !slices.Equal(r.Done, []string{"a"}) {
		t.Fatalf("approve: %+v", r)
	}
	n = h.node("a")
	if n.State != api.StateWaiting || n.HoldReason != "" || !strings.Contains(lastTransition(n).Reason, "approved by alice (held: manual): ticket 42") {
		t.Fatalf("a after approve: %+v", n)
	}
	if g := h.grant(at, "edge-b", "eu", 5); g == nil || !slices.Equal(g.Nodes, []string{"a"}) {
		t.Fatalf("grant after approve: %+v", g)
	}
	if audit, _ := h.l.Audit(1); audit[0].Verb != VerbApprove || audit[0].From != api.StateHeld {
		t.Fatalf("audit of the approve: %+v", audit)
	}
}

// TestApproval_ReprovisionHoldsAProvisionedIdentity: with reprovision hold, a provisioned node
// back in provisioning mode is held, naming when and by which edge it was provisioned; without,
// it is queued as before, and a gone node back is queued either way.
func TestApproval_ReprovisionHoldsAProvisionedIdentity(t *testing.T) {
	h := newHarness(t)
	h.registerWith(t0, nil, "eu", "a", "b")
	h.provision(t0, "edge-p", "eu", "a")
	h.provision(t0, "edge-p", "eu", "b")
	back := t0.Add(time.Hour)
	r := h.registerWith(back, &Approval{ReprovisionHold: true}, "eu", "a")
	if len(r.Held) != 1 || r.Requeued != 0 {
		t.Fatalf("register: %+v", r)
	}
	n := h.node("a")
	if n.State != api.StateHeld || n.HoldReason != api.HoldReprovision || !strings.Contains(n.HoldDetail, "by edge edge-p") || !strings.Contains(n.HoldDetail, t0.Format(time.RFC3339)) {
		t.Fatalf("a: %+v", n)
	}
	if tr := lastTransition(n); tr.From != api.StateProvisioned || !strings.HasPrefix(tr.Reason, seenAgainReason+"; held: reprovision") {
		t.Fatalf("a's history: %+v", tr)
	}
	if r := h.registerWith(back, &Approval{}, "eu", "b"); r.Requeued != 1 || h.node("b").State != api.StateWaiting {
		t.Fatalf("without the policy: %+v", r)
	}
}

// TestApproval_FlappingIdentityIsHeld: the Nth re-entry within the window holds the node as
// flapping; re-entries older than the window do not count.
func TestApproval_FlappingIdentityIsHeld(t *testing.T) {
	h := newHarness(t)
	a := &Approval{FlapCount: 3, FlapWindow: time.Hour}
	h.registerWith(t0, a, "eu", "a")
	at := t0
	h.provision(at, "edge-a", "eu", "a")
	for i := range 2 {
		at = at.Add(10 * time.Minute)
		if r := h.registerWith(at, a, "eu", "a"); r.Requeued != 1 {
			t.Fatalf("re-entry %d: %+v", i+1, r)
		}
		h.provision(at, "edge-a", "eu", "a")
	}
	at = at.Add(10 * time.Minute)
	if r := h.registerWith(at, a, "eu", "a"); len(r.Held) != 1 {
		t.Fatalf("third re-entry within the hour: %+v", r)
	}
	if n := h.node("a"); n.HoldReason != api.HoldFlapping || !strings.Contains(n.HoldDetail, "3 times within 1h0m0s") {
		t.Fatalf("a: %+v", n)
	}
	// Spread out, the same number of re-entries queues the node.
	h.registerWith(t0, a, "eu", "b")
	at = t0
	h.provision(at, "edge-a", "eu", "b")
	for i := range 3 {
		at = at.Add(40 * time.Minute)
		if r := h.registerWith(at, a, "eu", "b"); r.Requeued != 1 {
			t.Fatalf("spread re-entry %d: %+v", i+1, r)
		}
		h.provision(at, "edge-a", "eu", "b")
	}
}

// TestApproval_DuplicateResponderHoldsAndApproveKeepsTheLock: a failed result naming a second
// responder holds the node (no attempt counted, the lock window its edge's); approved inside that
// window, it is offered to no other edge until the window ends. At cluster protocol 7 the same
// result is a failure, as the build before records it.
func TestApproval_DuplicateResponderHoldsAndApproveKeepsTheLock(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a")
	ls := h.grant(t0, "edge-a", "eu", 1)
	rep := &Report{Now: t0, LeaseID: ls.ID, Token: ls.Token, Policy: testPolicy(), Results: []Result{{Identity: "a", Outcome: api.OutcomeFailed, Error: dupError}}}
	mustResult[*ReportResult](t, h.apply(rep))
	n := h.node("a")
	if n.State != api.StateHeld || n.HoldReason != api.HoldDuplicateResponder || n.HoldEdge != "edge-a" || n.HoldDetail != dupError || n.Attempts != 0 || n.LockEdge != "edge-a" {
		t.Fatalf("a: %+v", n)
	}
	if audit, _ := h.l.Audit(1); len(audit) != 1 || audit[0].Verb != VerbHold || audit[0].From != api.StateLeased {
		t.Fatalf("audit: %+v", audit)
	}
	at := t0.Add(time.Minute)
	h.operator(at, VerbApprove, "", "a")
	if g := h.grant(at, "edge-b", "eu", 5); g != nil {
		t.Fatalf("approved inside edge-a's lock window, a was granted to edge-b: %+v", g)
	}
	if g := h.grant(t0.Add(testPolicy().LockWindow), "edge-b", "eu", 5); g == nil || !slices.Equal(g.Nodes, []string{"a"}) {
		t.Fatalf("after the window: %+v", g)
	}

	old := protocolHarness(t, 7)
	old.register(t0, "eu", "a")
	ls = old.grant(t0, "edge-a", "eu", 1)
	rep.LeaseID, rep.Token = ls.ID, ls.Token
	mustResult[*ReportResult](t, old.apply(rep))
	if n := old.node("a"); n.State != api.StateWaiting || n.Attempts != 1 {
		t.Fatalf("at protocol 7: %+v", n)
	}
}

// TestApproval_BannedHeldNodeUnbansToHeld: denying a held node is a ban; unban returns it to the
// queue with its reason, not to waiting.
func TestApproval_BannedHeldNodeUnbansToHeld(t *testing.T) {
	h := newHarness(t)
	h.registerWith(t0, &Approval{Manual: []string{AnyRegion}}, "eu", "a")
	h.operator(t0, VerbBan, "", "a")
	refusedWith(t, h.operator(t0, VerbApprove, "", "a"), "a", ErrNodeBusy, "banned, not held")
	h.operator(t0, VerbUnban, "", "a")
	if n := h.node("a"); n.State != api.StateHeld || n.HoldReason != api.HoldManual {
		t.Fatalf("a after unban: %+v", n)
	}
}

// TestApproval_RefusalsAndProtocol: approve refuses a node not held and one no longer in the
// region it was selected by; below cluster protocol 8 it is refused whole and a registration's
// policy holds nothing; a bad policy is refused naming what is wrong.
func TestApproval_RefusalsAndProtocol(t *testing.T) {
	h := newHarness(t)
	a := &Approval{Manual: []string{"eu"}}
	h.registerWith(t0, a, "eu", "a", "b")
	h.register(t0, "us", "c")
	h.operator(t0, VerbMove, "us", "b")
	r := h.operator(t0, VerbApprove, "eu", "a", "b", "c")
	if !slices.Equal(r.Done, []string{"a"}) {
		t.Fatalf("approve: %+v", r)
	}
	refusedWith(t, r, "b", ErrNodeBusy, "in region us now, not eu")
	refusedWith(t, r, "c", ErrNodeBusy, "waiting, not held")
	h.registerWith(t0, a, "eu", "d")
	retried := mustResult[*RetryResult](t, h.apply(&Retry{Now: t0, Policy: testPolicy(), Nodes: []string{"d"}}))
	if len(retried.Rejected) != 1 || !strings.Contains(retried.Rejected[0].Reason, "d is held (manual) for an operator's approve") {
		t.Fatalf("retry of a held node: %+v", retried)
	}

	mustErr(t, h.apply(&Register{Now: t0, Policy: testPolicy(), Approval: &Approval{FlapCount: 1, FlapWindow: time.Hour}, Nodes: []RegisterNode{{Identity: "x", Region: "eu"}}}), ErrBadCommand)
	err, _ := h.apply(&Register{Now: t0, Policy: testPolicy(), Approval: &Approval{FlapCount: 3}, Nodes: []RegisterNode{{Identity: "x", Region: "eu"}}}).(error)
	if err == nil || !strings.Contains(err.Error(), "approval flapping window") {
		t.Fatalf("no window: %v", err)
	}

	old := protocolHarness(t, 7)
	old.registerWith(t0, a, "eu", "a")
	if n := old.node("a"); n.State != api.StateWaiting {
		t.Fatalf("held at protocol 7: %+v", n)
	}
	err, _ = old.apply(&Operator{Now: t0, By: "alice", Verb: VerbApprove, Nodes: []string{"a"}, Policy: testPolicy()}).(error)
	if !errors.Is(err, ErrClusterProtocol) {
		t.Fatalf("approve at protocol 7: %v", err)
	}
}
