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
// sighting would then offer it); unbanned it waits again, as it did when banned (its attempt
// kept). Each step is in its history and the audit index with who did it.
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
	if n := h.node("a"); n.State != api.StateWaiting || n.Attempts != 1 {
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

// TestOperator_ForgetWaitsOutALockHeldWindow: after a lock_held result go-choria's lock is another
// caller's for a full window, which the ledger keeps in the node's record; forgotten, the node's
// next sighting would queue it afresh for any edge inside that lock. So forget refuses it until
// the window ends, naming the node and the end, also after a retry. Below heldLockProtocol it is
// forgotten at once, as the builds before applied it.
func TestOperator_ForgetWaitsOutALockHeldWindow(t *testing.T) {
	windowEnd := t0.Add(testPolicy().LockWindow)
	for _, v := range []int{heldLockProtocol - 1, heldLockProtocol} {
		h := newHarnessAt(t, v)
		h.register(t0, "eu", "n1", "n2")
		lockHeld(t, h, t0, "edge-a", "n1")
		lockHeld(t, h, t0, "edge-a", "n2")
		at := t0.Add(time.Second)
		mustResult[*RetryResult](t, h.retry(at, Retry{Nodes: []string{"n2"}}))
		r := h.operator(at, VerbForget, "", "n1", "n2")
		if v < heldLockProtocol {
			if !slices.Equal(r.Done, []string{"n1", "n2"}) {
				t.Fatalf("protocol %d: forget: %+v, want both forgotten (the older rule)", v, r)
			}
			continue
		}
		for _, id := range []string{"n1", "n2"} {
			refusedWith(t, r, id, ErrNodeBusy, "node "+id+" is in go-choria's provisioning lock of another caller (lock_held) until "+windowEnd.Format(time.RFC3339))
		}
		if len(r.Done) != 0 {
			t.Fatalf("protocol %d: forget inside the window: %+v", v, r)
		}
		// Seen again meanwhile, it is not offered inside the window either.
		h.register(at, "eu", "n1", "n2")
		if g := h.grant(windowEnd.Add(-time.Nanosecond), "edge-b", "eu", 2); g != nil {
			t.Fatalf("protocol %d: edge-b was granted %v inside the lock window", v, g.Nodes)
		}
		if r := h.operator(windowEnd, VerbForget, "", "n1", "n2"); !slices.Equal(r.Done, []string{"n1", "n2"}) {
			t.Fatalf("protocol %d: forget at the window's end: %+v", v, r)
		}
	}
}

// inState brings a new node id of region eu to state s through the commands that do so in
// the field, and returns the time after the last of them.
func inState(t *testing.T, h *harness, at time.Time, id string, s api.NodeState) time.Time {
	t.Helper()
	h.register(at, "eu", id)
	outcome := map[api.NodeState]api.Outcome{
		api.StateProvisioned: api.OutcomeProvisioned, api.StateDeferred: api.OutcomeDeferred,
		api.StateShutdown: api.OutcomeShutdown, api.StateGone: api.OutcomeGone,
	}
	switch s {
	case api.StateWaiting:
	case api.StateAbandoned:
		at = abandon(t, h, at, id)
	default:
		ls := h.grant(at, "edge-a", "eu", 1)
		if ls == nil || !slices.Equal(ls.Nodes, []string{id}) {
			t.Fatalf("grant of %s: %+v", id, ls)
		}
		mustResult[*ReportResult](t, h.report(at, ls, outcome[s], id))
	}
	if n := h.node(id); n.State != s {
		t.Fatalf("%s is %s, want %s", id, n.State, s)
	}
	return at.Add(time.Second)
}

// TestOperator_UnbanReturnsTheNodeToItsStateBeforeTheBan: a node banned while provisioned (or
// deferred, shut down, abandoned, gone or waiting) is that again when unbanned, with its attempts,
// error and not-before time as they were: unban undoes the ban, nothing more (retry is the verb
// that gives a node another chance). A provisioned one sent back to waiting would be offered to an
// edge although it is no longer in provisioning mode, and end gone. Below unbanRestoreProtocol
// every unbanned node waits again with its attempts reset, as the builds before applied it.
func TestOperator_UnbanReturnsTheNodeToItsStateBeforeTheBan(t *testing.T) {
	states := []api.NodeState{api.StateWaiting, api.StateProvisioned, api.StateDeferred, api.StateShutdown, api.StateAbandoned, api.StateGone}
	for _, v := range []int{unbanRestoreProtocol - 1, unbanRestoreProtocol} {
		for _, s := range states {
			h := newHarnessAt(t, v)
			id := "n-" + string(s)
			at := inState(t, h, t0, id, s)
			before := h.node(id)
			if r := h.operator(at, VerbBan, "", id); !slices.Equal(r.Done, []string{id}) {
				t.Fatalf("protocol %d: ban of a %s node: %+v", v, s, r)
			}
			if r := h.operator(at.Add(time.Second), VerbUnban, "", id); !slices.Equal(r.Done, []string{id}) {
				t.Fatalf("protocol %d: unban of a %s node: %+v", v, s, r)
			}
			n := h.node(id)
			if v < unbanRestoreProtocol {
				if n.State != api.StateWaiting || n.Attempts != 0 {
					t.Fatalf("protocol %d: node banned %s, unbanned: %+v, want waiting with attempts reset (the older rule)", v, s, n)
				}
				continue
			}
			if n.State != s || n.Attempts != before.Attempts || n.LastError != before.LastError || !n.NotBefore.Equal(before.NotBefore) || n.PriorState != "" {
				t.Fatalf("protocol %d: node banned %s, unbanned:\n got %+v\nwant %+v", v, s, n, before)
			}
			if tr := lastTransition(n); tr.From != api.StateBanned || tr.To != s || !strings.Contains(tr.Reason, "unban by alice") {
				t.Fatalf("protocol %d: unban's history entry: %+v", v, tr)
			}
			if c := h.counts()["eu"]; c[s] != 1 || c[api.StateBanned] != 0 {
				t.Fatalf("protocol %d: counts after unbanning a %s node: %v", v, s, c)
			}
		}
	}
}

// TestOperator_UnbanOfANodeBannedBeforeTheProtocolRaise: a node banned at the protocol before
// has no prior state in its record; unbanned after the raise, it returns to the state its ban's
// history entry came from.
func TestOperator_UnbanOfANodeBannedBeforeTheProtocolRaise(t *testing.T) {
	h := newHarnessAt(t, unbanRestoreProtocol-1)
	at := inState(t, h, t0, "p", api.StateProvisioned)
	h.operator(at, VerbBan, "", "p")
	if n := h.node("p"); n.PriorState != "" {
		t.Fatalf("a ban below protocol %d recorded the prior state: %+v", unbanRestoreProtocol, n)
	}
	mustResult[*ProtocolResult](t, h.apply(&SetProtocol{Version: unbanRestoreProtocol}))
	h.operator(at.Add(time.Second), VerbUnban, "", "p")
	if n := h.node("p"); n.State != api.StateProvisioned {
		t.Fatalf("p unbanned after the raise: %+v, want provisioned", n)
	}
}
