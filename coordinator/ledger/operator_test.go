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

func (h *harness) operator(at time.Time, verb, region string, ids ...string) *OperatorResult {
	h.t.Helper()
	return mustResult[*OperatorResult](h.t, h.apply(&Operator{Now: at, By: "alice", Verb: verb, Nodes: ids, Region: region, Reason: "ticket 42", Policy: testPolicy()}))
}

func refusedWith(t *testing.T, r *OperatorResult, id string, want error, text string) {
	t.Helper()
	for _, rj := range r.Rejected {
		if rj.Identity == id && errors.Is(rj.Err, want) && strings.Contains(rj.Reason, text) {
			return
		}
	}
	t.Fatalf("%s not refused with %v %q: %+v", id, want, text, r)
}

// TestOperator_BanKeepsANodeFromEveryEdgeUntilUnbanned: a banned node is never granted, a
// sighting leaves it banned, a late result of an earlier lease does not make it provisioned (a
// sighting would then offer it); unbanned it waits again with its attempts reset. Each step is
// in its history and the audit index with who did it.
func TestOperator_BanKeepsANodeFromEveryEdgeUntilUnbanned(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a", "b")
	l1 := h.grant(t0, "edge-a", "eu", 1) // a
	at := h.expireAll(l1)
	if r := h.operator(at, VerbBan, "", "a"); !slices.Equal(r.Done, []string{"a"}) {
		t.Fatalf("ban: %+v", r)
	}
	if n := h.node("a"); n.State != api.StateBanned || !strings.Contains(lastTransition(n).Reason, "ban by alice: ticket 42") {
		t.Fatalf("a after the ban: %+v", n)
	}
	later := at.Add(time.Hour)
	if r := h.register(later, "eu", "a"); r.Requeued != 0 {
		t.Fatalf("a sighting requeued a banned node: %+v", r)
	}
	mustErr(t, h.apply(lateReport(later, l1, "edge-a", api.OutcomeProvisioned, "a")), ErrUnknownLease)
	if n := h.node("a"); n.State != api.StateBanned {
		t.Fatalf("a late result made a banned node %s", n.State)
	}
	if g := h.grant(later, "edge-b", "eu", 5); g == nil || slices.Contains(g.Nodes, "a") {
		t.Fatalf("grant with a banned node: %+v", g)
	}
	refusedWith(t, h.operator(later, VerbBan, "", "a"), "a", ErrNodeBusy, "banned already")
	if r := h.operator(later, VerbUnban, "", "a"); !slices.Equal(r.Done, []string{"a"}) {
		t.Fatalf("unban: %+v", r)
	}
	if n := h.node("a"); n.State != api.StateWaiting || n.Attempts != 0 {
		t.Fatalf("a after the unban: %+v", n)
	}
	if g := h.grant(later.Add(testPolicy().LockWindow), "edge-c", "eu", 5); g == nil || !slices.Equal(g.Nodes, []string{"a"}) {
		t.Fatalf("grant after the unban: %+v", g)
	}
	audit, err := h.l.Audit(10)
	if err != nil || len(audit) != 2 || audit[0].Verb != VerbUnban || audit[1].Verb != VerbBan || audit[1].By != "alice" || audit[1].From != api.StateWaiting {
		t.Fatalf("audit: %+v %v", audit, err)
	}
}

// TestOperator_ForgetAndMove: a forgotten node leaves the ledger and its counts (a sighting adds
// it anew), with an audit entry; a moved node is offered only in its new region.
func TestOperator_ForgetAndMove(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a", "b")
	if r := h.operator(t0, VerbForget, "", "a"); !slices.Equal(r.Done, []string{"a"}) {
		t.Fatalf("forget: %+v", r)
	}
	if _, err := h.l.Node("a"); !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("forgotten node: %v", err)
	}
	if c := h.counts()["eu"]; c[api.StateWaiting] != 1 {
		t.Fatalf("counts after forget: %v", c)
	}
	if r := h.register(t0.Add(time.Second), "eu", "a"); r.Added != 1 {
		t.Fatalf("a forgotten node seen again: %+v", r)
	}
	if r := h.operator(t0, VerbMove, "us", "b"); !slices.Equal(r.Done, []string{"b"}) {
		t.Fatalf("move: %+v", r)
	}
	if n := h.node("b"); n.Region != "us" || n.State != api.StateWaiting || !strings.Contains(lastTransition(n).Reason, "moved from eu to us by alice") {
		t.Fatalf("b after the move: %+v", n)
	}
	if g := h.grant(t0.Add(2*time.Second), "edge-eu", "eu", 5); g == nil || slices.Contains(g.Nodes, "b") {
		t.Fatalf("eu grant after the move: %+v", g)
	}
	if g := h.grant(t0, "edge-us", "us", 5); g == nil || !slices.Equal(g.Nodes, []string{"b"}) {
		t.Fatalf("us grant after the move: %+v", g)
	}
	audit, _ := h.l.Audit(10)
	if len(audit) != 2 || audit[0].Verb != VerbMove || audit[0].To != "us" || audit[1].Verb != VerbForget || audit[1].Identity != "a" {
		t.Fatalf("audit: %+v", audit)
	}
}

// TestOperator_RefusesNodesAWorkerMayBeOn: a leased node, and a node a live lease still fences,
// are refused by name for the verbs that could let another edge act on it; unknown nodes and
// verbs that change nothing are refused too, and the rest of the command applies.
func TestOperator_RefusesNodesAWorkerMayBeOn(t *testing.T) {
	h := newHarness(t)
	results := h.applyAll(lateReLeasedScenario()) // a fenced by l2 (edge-b), b leased under l2
	mustResult[*ReportResult](t, results[5])
	h.register(t0, "eu", "c")
	at := t0.Add(10 * time.Minute)
	for _, verb := range Verbs() {
		region := ""
		if verb == VerbMove {
			region = "us"
		}
		r := h.operator(at, verb, region, "b", "nope")
		refusedWith(t, r, "b", ErrNodeBusy, "leased to edge edge-b")
		refusedWith(t, r, "nope", ErrUnknownNode, "nope")
	}
	refusedWith(t, h.operator(at, VerbForget, "", "a"), "a", ErrNodeBusy, "fenced by lease l2")
	// A lease of d expires: edge-a keeps go-choria's lock on it a window past the lease's end.
	h.register(at, "us", "d")
	ld := h.grant(at, "edge-a", "us", 1)
	at2 := h.expireAll(ld)
	refusedWith(t, h.operator(at2, VerbForget, "", "d"), "d", ErrNodeBusy, "provisioning lock of edge edge-a")
	if r := h.operator(at2.Add(testPolicy().LockWindow+time.Minute), VerbForget, "", "d"); !slices.Equal(r.Done, []string{"d"}) {
		t.Fatalf("forget after the lock window: %+v", r)
	}
	refusedWith(t, h.operator(at, VerbUnban, "", "c"), "c", ErrNodeBusy, "not banned")
	refusedWith(t, h.operator(at, VerbMove, "eu", "c"), "c", ErrNodeBusy, "in region eu already")
	mustErr(t, h.apply(&Operator{Now: at, By: "alice", Verb: "explode", Nodes: []string{"c"}, Policy: testPolicy()}), ErrBadCommand)

	old := newHarnessAt(t, operatorProtocol-1)
	old.register(t0, "eu", "c")
	mustErr(t, old.apply(&Operator{Now: at, By: "alice", Verb: VerbBan, Nodes: []string{"c"}, Policy: testPolicy()}), ErrClusterProtocol)
}
