// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"testing"

	"github.com/anishathalye/porcupine"

	"github.com/seed96588659/muster/pkg/api"
)

// Hand-made histories of one node, each call with its real-time interval [call, return].

type step struct {
	call, ret int64
	in        nodeCall
	out       nodeAnswer
}

// at is a call made at call and answered at ret (never: no answer came).
func at(call, ret int64) func(nodeCall, nodeAnswer) step {
	return func(in nodeCall, out nodeAnswer) step { return step{call: call, ret: ret, in: in, out: out} }
}

func lease(id string, token uint64, edge string) leaseRef {
	return leaseRef{ID: id, Token: token, Edge: edge}
}

func grant(l leaseRef) (nodeCall, nodeAnswer) {
	return nodeCall{Kind: api.CallAcquire, Edge: l.Edge}, nodeAnswer{Lease: l}
}

func renewed(l leaseRef, listed bool) (nodeCall, nodeAnswer) {
	return nodeCall{Kind: api.CallRenew, Edge: l.Edge, Lease: l}, nodeAnswer{Lease: l, Listed: listed}
}

func renewRefused(l leaseRef, code api.Code) (nodeCall, nodeAnswer) {
	return nodeCall{Kind: api.CallRenew, Edge: l.Edge, Lease: l}, nodeAnswer{Kind: refused, Code: code}
}

func reported(l leaseRef, o api.Outcome, request string, applied bool) (nodeCall, nodeAnswer) {
	return nodeCall{Kind: api.CallReport, Edge: l.Edge, Lease: l, Outcome: o, RequestID: request}, nodeAnswer{Applied: applied}
}

func reportUnanswered(l leaseRef, o api.Outcome, request string) (nodeCall, nodeAnswer) {
	return nodeCall{Kind: api.CallReport, Edge: l.Edge, Lease: l, Outcome: o, RequestID: request}, nodeAnswer{Kind: unknown}
}

func registered(edge string) (nodeCall, nodeAnswer) {
	return nodeCall{Kind: api.CallRegister, Edge: edge}, nodeAnswer{}
}

func seen(state api.NodeState, l leaseRef) (nodeCall, nodeAnswer) {
	return nodeCall{Kind: kindObserve}, nodeAnswer{Seen: observed{State: state, Lease: l}}
}

func check(steps ...step) porcupine.CheckResult {
	ops := make([]porcupine.Operation, len(steps))
	for i, s := range steps {
		in := s.in
		in.Node = "a"
		ops[i] = porcupine.Operation{ClientId: i, Input: in, Output: s.out, Call: s.call, Return: s.ret}
	}
	return porcupine.CheckOperationsTimeout(edgeModel(), ops, 0)
}

var (
	l1 = lease("l1", 10, "e")
	l2 = lease("l2", 20, "f")
	l3 = lease("l3", 30, "e")
)

// A round as the ledger may answer it: a finished node requeued, granted, renewed, provisioned;
// requeued again and granted to f, whose lease expires; e gets it, and f's late provisioned
// takes it out of e's lease, whose renewal then no longer lists it and whose result for it is
// rejected; an unanswered report at the end.
func TestModel_LegalHistoryPasses(t *testing.T) {
	res := check(
		at(0, 1)(seen(api.StateProvisioned, leaseRef{})),
		at(2, 3)(registered("e")),
		at(4, 6)(grant(l1)),
		at(7, 8)(renewed(l1, true)),
		at(9, 10)(reported(l1, api.OutcomeProvisioned, "r1", true)),
		at(11, 12)(registered("f")),
		at(13, 14)(grant(l2)),
		at(15, 16)(grant(l3)), // l2 expired in between: nothing says otherwise
		at(17, 18)(reported(l2, api.OutcomeProvisioned, "r2", true)),
		at(19, 20)(renewed(l3, false)),
		at(21, 22)(reported(l3, api.OutcomeFailed, "r3", false)),
		at(23, never)(reportUnanswered(l3, api.OutcomeReleased, "r4")),
	)
	if res != porcupine.Ok {
		t.Fatalf("legal history checked %s", res)
	}
}

// Each illegal pattern next to the closest legal history, so the failure is that pattern's.
func TestModel_IllegalHistoriesFail(t *testing.T) {
	cases := []struct {
		name         string
		legal, wrong []step
	}{{
		name: "a node granted to a second lease while the first provably still holds it",
		// legal: the first lease may have expired before the second grant
		legal: []step{at(0, 1)(grant(l1)), at(2, 3)(grant(l2))},
		// the first lease's renewal after the second grant still lists the node: it never expired
		wrong: []step{at(0, 1)(grant(l1)), at(2, 3)(grant(l2)), at(4, 5)(renewed(l1, true))},
	}, {
		name:  "the same, with the renewal overlapping the grant in real time (it may come first)",
		legal: []step{at(0, 1)(grant(l1)), at(2, 4)(grant(l2)), at(3, 5)(renewed(l1, true))},
		wrong: []step{at(0, 1)(grant(l1)), at(2, 3)(grant(l2)), at(4, 5)(renewed(l1, true))},
	}, {
		name:  "a result applied under a lease after another lease was granted the node",
		legal: []step{at(0, 1)(grant(l1)), at(2, 3)(reported(l1, api.OutcomeFailed, "r1", true)), at(4, 5)(grant(l2))},
		wrong: []step{at(0, 1)(grant(l1)), at(2, 3)(grant(l2)), at(4, 5)(reported(l1, api.OutcomeFailed, "r1", true))},
	}, {
		name:  "an idempotent retry answered differently",
		legal: []step{at(0, 1)(grant(l1)), at(2, 3)(reported(l1, api.OutcomeProvisioned, "r1", true)), at(4, 5)(reported(l1, api.OutcomeProvisioned, "r1", true))},
		wrong: []step{at(0, 1)(grant(l1)), at(2, 3)(reported(l1, api.OutcomeProvisioned, "r1", true)), at(4, 5)(reported(l1, api.OutcomeProvisioned, "r1", false))},
	}, {
		name:  "a second report of a node its lease already reported is applied",
		legal: []step{at(0, 1)(grant(l1)), at(2, 3)(reported(l1, api.OutcomeFailed, "r1", true)), at(4, 5)(reported(l1, api.OutcomeFailed, "r2", false))},
		wrong: []step{at(0, 1)(grant(l1)), at(2, 3)(reported(l1, api.OutcomeFailed, "r1", true)), at(4, 5)(reported(l1, api.OutcomeFailed, "r2", true))},
	}, {
		name: "a late provisioned of a lease that reported the node failed",
		// legal: the lease let go of the node by its expiry, having reported nothing of it
		legal: []step{at(0, 1)(grant(l1)), at(2, 3)(grant(l2)), at(4, 5)(reported(l1, api.OutcomeProvisioned, "r2", true))},
		wrong: []step{at(0, 1)(grant(l1)), at(2, 3)(reported(l1, api.OutcomeFailed, "r1", true)), at(4, 5)(grant(l2)), at(6, 7)(reported(l1, api.OutcomeProvisioned, "r2", true))},
	}, {
		name:  "a late provisioned after a later lease provisioned the node",
		legal: []step{at(0, 1)(grant(l1)), at(2, 3)(grant(l2)), at(4, 5)(reported(l1, api.OutcomeProvisioned, "r1", true)), at(6, 7)(reported(l2, api.OutcomeProvisioned, "r2", false))},
		wrong: []step{at(0, 1)(grant(l1)), at(2, 3)(grant(l2)), at(4, 5)(reported(l2, api.OutcomeProvisioned, "r2", true)), at(6, 7)(reported(l1, api.OutcomeProvisioned, "r1", true))},
	}, {
		name: "a node a late result took out of a live lease requeued while that lease lives",
		// legal: the lease that lost the node may have expired before the register
		legal: []step{at(0, 1)(grant(l1)), at(2, 3)(grant(l2)), at(4, 5)(reported(l1, api.OutcomeProvisioned, "r1", true)),
			at(6, 7)(registered("e")), at(8, 9)(grant(l3))},
		// its renewal after the new grant shows it had not: the fence had to keep the node out
		wrong: []step{at(0, 1)(grant(l1)), at(2, 3)(grant(l2)), at(4, 5)(reported(l1, api.OutcomeProvisioned, "r1", true)),
			at(6, 7)(registered("e")), at(8, 9)(grant(l3)), at(10, 11)(renewed(l2, false))},
	}, {
		name:  "a result of the lease holding the node rejected",
		legal: []step{at(0, 1)(grant(l1)), at(2, 3)(reported(l1, api.OutcomeProvisioned, "r1", true))},
		wrong: []step{at(0, 1)(grant(l1)), at(2, 3)(reported(l1, api.OutcomeProvisioned, "r1", false)), at(4, 5)(renewed(l1, true))},
	}, {
		name:  "a finished node granted again with no register in between",
		legal: []step{at(0, 1)(grant(l1)), at(2, 3)(reported(l1, api.OutcomeProvisioned, "r1", true)), at(4, 5)(registered("f")), at(6, 7)(grant(l2))},
		wrong: []step{at(0, 1)(grant(l1)), at(2, 3)(reported(l1, api.OutcomeProvisioned, "r1", true)), at(6, 7)(grant(l2))},
	}, {
		name:  "a fencing token that goes backwards",
		legal: []step{at(0, 1)(grant(l1)), at(2, 3)(reported(l1, api.OutcomeReleased, "r1", true)), at(4, 5)(grant(l2))},
		wrong: []step{at(0, 1)(grant(l2)), at(2, 3)(reported(l2, api.OutcomeReleased, "r1", true)), at(4, 5)(grant(l1))},
	}, {
		name:  "a renewal lists a node its lease reported",
		legal: []step{at(0, 1)(grant(l1)), at(2, 3)(reported(l1, api.OutcomeProvisioned, "r1", true)), at(4, 5)(renewed(l1, false))},
		wrong: []step{at(0, 1)(grant(l1)), at(2, 3)(reported(l1, api.OutcomeProvisioned, "r1", true)), at(4, 5)(renewed(l1, true))},
	}, {
		name:  "a renewal leaves out a node its lease holds",
		legal: []step{at(0, 1)(grant(l1)), at(2, 3)(renewed(l1, true))},
		wrong: []step{at(0, 1)(grant(l1)), at(2, 3)(renewed(l1, false))},
	}, {
		name:  "a lease said unknown, then renewed",
		legal: []step{at(0, 1)(grant(l1)), at(2, 3)(renewRefused(l1, api.CodeLeaseExpired)), at(4, 5)(renewed(l1, true))},
		wrong: []step{at(0, 1)(grant(l1)), at(2, 3)(renewRefused(l1, api.CodeUnknownLease)), at(4, 5)(renewed(l1, true))},
	}, {
		name:  "the ledger's record contradicts the answers",
		legal: []step{at(0, 1)(grant(l1)), at(2, 3)(seen(api.StateLeased, l1))},
		wrong: []step{at(0, 1)(grant(l1)), at(2, 3)(seen(api.StateProvisioned, leaseRef{}))},
	}, {
		name:  "a finished node in the ledger granted with no register in between",
		legal: []step{at(0, 1)(seen(api.StateProvisioned, leaseRef{})), at(2, 3)(registered("e")), at(4, 5)(grant(l1))},
		wrong: []step{at(0, 1)(seen(api.StateProvisioned, leaseRef{})), at(4, 5)(grant(l1))},
	}, {
		name:  "an acquire answered with another edge's lease",
		legal: []step{at(0, 1)(grant(l1))},
		wrong: []step{at(0, 1)(nodeCall{Kind: api.CallAcquire, Edge: "f"}, nodeAnswer{Lease: l1})},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if res := check(tc.legal...); res != porcupine.Ok {
				t.Errorf("the legal history checked %s", res)
			}
			if res := check(tc.wrong...); res != porcupine.Illegal {
				t.Errorf("the illegal history checked %s", res)
			}
		})
	}
}

// Calls that got no answer may have taken effect at any time after they were sent, or never.
func TestModel_UnansweredCallsMayOrMayNotHaveTakenEffect(t *testing.T) {
	// A report whose edge was killed before the answer: the node may still be leased when the
	// lease expires and is granted again without a register ...
	if res := check(at(0, 1)(grant(l1)), at(2, never)(reportUnanswered(l1, api.OutcomeProvisioned, "r1")), at(4, 5)(grant(l2))); res != porcupine.Ok {
		t.Errorf("unanswered report, then a grant: %s", res)
	}
	// ... or it was applied, and its retry is answered with its outcome.
	if res := check(at(0, 1)(grant(l1)), at(2, never)(reportUnanswered(l1, api.OutcomeProvisioned, "r1")), at(4, 5)(reported(l1, api.OutcomeProvisioned, "r1", true)), at(6, 7)(renewed(l1, false))); res != porcupine.Ok {
		t.Errorf("unanswered report, then its retry: %s", res)
	}
	// But not both: a rejected retry means the first try was not applied either, so the lease
	// still held the node (a renewal after it shows the lease never expired).
	if res := check(at(0, 1)(grant(l1)), at(2, never)(reportUnanswered(l1, api.OutcomeProvisioned, "r1")), at(4, 5)(reported(l1, api.OutcomeProvisioned, "r1", false)), at(6, 7)(renewed(l1, true))); res != porcupine.Illegal {
		t.Errorf("unanswered report, then a rejected retry: %s, want illegal", res)
	}
}

// A node whose history began before the calls checked takes the first answer about it as its
// state.
func TestModel_UnknownStartLearnsFromTheFirstAnswer(t *testing.T) {
	if res := check(at(0, 1)(reported(l1, api.OutcomeProvisioned, "r1", true)), at(2, 3)(registered("f")), at(4, 5)(grant(l2))); res != porcupine.Ok {
		t.Errorf("report first: %s", res)
	}
	if res := check(at(0, 1)(renewed(l1, true)), at(2, 3)(grant(l2)), at(4, 5)(renewed(l1, true))); res != porcupine.Illegal {
		t.Errorf("a renewal teaches the holder, then a double grant: %s, want illegal", res)
	}
}
