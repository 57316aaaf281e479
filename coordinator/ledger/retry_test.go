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

// abandon fails node id until the ledger abandons it (testPolicy: 3 attempts); it returns the
// time after the last failure.
func abandon(t *testing.T, h *harness, at time.Time, id string) time.Time {
	t.Helper()
	for h.node(id).State != api.StateAbandoned {
		at = at.Add(10 * time.Second)
		// Every eligible node of the region is granted; the others are released again.
		ls := h.grant(at, "edge-a", h.node(id).Region, 100)
		if ls == nil || !slices.Contains(ls.Nodes, id) {
			t.Fatalf("grant at %s: %+v, want %s in it", at, ls, id)
		}
		c := &Report{Now: at, LeaseID: ls.ID, Token: ls.Token, Policy: testPolicy()}
		for _, n := range ls.Nodes {
			if n == id {
				c.Results = append(c.Results, Result{Identity: n, Outcome: api.OutcomeFailed, Error: errIf(api.OutcomeFailed)})
			} else {
				c.Results = append(c.Results, Result{Identity: n, Outcome: api.OutcomeReleased})
			}
		}
		mustResult[*ReportResult](t, h.apply(c))
	}
	return at
}

func (h *harness) retry(at time.Time, c Retry) any {
	h.t.Helper()
	c.Now, c.Policy = at, testPolicy()
	if c.By == "" {
		c.By = "operator"
	}
	return h.apply(&c)
}

func TestRetry_AbandonedNodeWaitsAgainWithAttemptsResetAndIsGrantedAtOnce(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "n1", "n2")
	at := abandon(t, h, t0, "n1")
	before := h.node("n1")
	if before.Attempts != 3 || before.LastError == "" {
		t.Fatalf("abandoned node: %+v", before)
	}
	at = at.Add(time.Second)
	res := mustResult[*RetryResult](t, h.retry(at, Retry{Nodes: []string{"n1"}}))
	if len(res.Rejected) != 0 || len(res.Retried) != 1 {
		t.Fatalf("retry: %+v", res)
	}
	if r := res.Retried[0]; r.Identity != "n1" || r.Region != "eu" || r.From != api.StateAbandoned || r.Attempts != 3 || r.LastError != "inventory failed" {
		t.Errorf("retried node as it was: %+v", r)
	}
	n := h.node("n1")
	if n.State != api.StateWaiting || n.Attempts != 0 || n.LastError != "" || !n.NotBefore.Equal(at) {
		t.Errorf("after retry: state %s attempts %d error %q not_before %s; want waiting 0 \"\" %s", n.State, n.Attempts, n.LastError, n.NotBefore, at)
	}
	last := n.History[len(n.History)-1]
	if last.From != api.StateAbandoned || last.To != api.StateWaiting || last.Reason != "retried by the operator" || !last.At.Equal(at) {
		t.Errorf("last transition %+v", last)
	}
	if c := h.counts()["eu"]; c[api.StateWaiting] != 2 || c[api.StateAbandoned] != 0 {
		t.Errorf("counts after retry: %v", c)
	}
	// Eligible now: no backoff is left, and it fails three times again before it is abandoned.
	ls := h.grant(at, "edge-a", "eu", 2)
	if ls == nil || len(ls.Nodes) != 2 {
		t.Fatalf("grant after retry: %+v", ls)
	}
	// The record survives a decode round trip with the spelled-out reason.
	if got := h.node("n1").History; got[len(got)-1].Reason != "granted" || got[len(got)-2].Reason != "retried by the operator" {
		t.Errorf("history after grant: %+v", got)
	}
}

func TestRetry_GoneAndDeferredNodesWaitWithNoBackoffLeft(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "gone", "deferred")
	ls := h.grant(t0, "edge-a", "eu", 2)
	c := &Report{Now: t0, LeaseID: ls.ID, Token: ls.Token, Policy: testPolicy(), Results: []Result{
		{Identity: "gone", Outcome: api.OutcomeGone, Error: "not in provisioning mode"},
		{Identity: "deferred", Outcome: api.OutcomeDeferred},
	}}
	mustResult[*ReportResult](t, h.apply(c))
	at := t0.Add(100 * time.Millisecond) // the deferral's backoff (1s) has not passed
	res := mustResult[*RetryResult](t, h.retry(at, Retry{Nodes: []string{"gone", "deferred"}}))
	if len(res.Retried) != 2 || len(res.Rejected) != 0 {
		t.Fatalf("retry: %+v", res)
	}
	for _, id := range []string{"gone", "deferred"} {
		if n := h.node(id); n.State != api.StateWaiting || !n.NotBefore.Equal(at) {
			t.Errorf("%s: %s not before %s", id, n.State, n.NotBefore)
		}
	}
	if got := h.grant(at, "edge-a", "eu", 5); got == nil || len(got.Nodes) != 2 {
		t.Errorf("grant right after the retry: %+v", got)
	}
}

// A leased node is never touched (a worker may be on it); an unknown node, a waiting one and a
// provisioned one are refused by name; the others of the command still move.
func TestRetry_RefusesLeasedUnknownAndNotFinalNodesByName(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "abandoned", "leased", "provisioned", "waiting")
	at := abandon(t, h, t0, "abandoned").Add(10 * time.Second)
	ls := h.grant(at, "edge-a", "eu", 3)
	if ls == nil || len(ls.Nodes) != 3 || slices.Contains(ls.Nodes, "abandoned") {
		t.Fatalf("grant: %+v", ls)
	}
	c := &Report{Now: at, LeaseID: ls.ID, Token: ls.Token, Policy: testPolicy(), Results: []Result{
		{Identity: "provisioned", Outcome: api.OutcomeProvisioned}, {Identity: "waiting", Outcome: api.OutcomeReleased},
	}}
	mustResult[*ReportResult](t, h.apply(c))
	for id, want := range map[string]api.NodeState{"leased": api.StateLeased, "provisioned": api.StateProvisioned, "waiting": api.StateWaiting} {
		if got := h.node(id).State; got != want {
			t.Fatalf("%s is %s, want %s", id, got, want)
		}
	}
	leasedBefore := encodeNode(h.node("leased"))
	res := mustResult[*RetryResult](t, h.retry(at.Add(time.Second), Retry{Nodes: []string{"leased", "nope", "waiting", "provisioned", "abandoned"}}))
	if len(res.Retried) != 1 || res.Retried[0].Identity != "abandoned" {
		t.Fatalf("retried %+v", res.Retried)
	}
	want := map[string]error{"leased": ErrNotRetryable, "nope": ErrUnknownNode, "waiting": ErrNotRetryable, "provisioned": ErrNotRetryable}
	if len(res.Rejected) != len(want) {
		t.Fatalf("rejected %+v", res.Rejected)
	}
	for _, r := range res.Rejected {
		if !errors.Is(r.Err, want[r.Identity]) {
			t.Errorf("%s refused with %v, want %v", r.Identity, r.Err, want[r.Identity])
		}
	}
	if got := encodeNode(h.node("leased")); string(got) != string(leasedBefore) {
		t.Errorf("the leased node was changed by a refused retry")
	}
	if n := h.node("provisioned"); n.State != api.StateProvisioned {
		t.Errorf("provisioned node is %s", n.State)
	}
}

// The leader selects a region's nodes, then proposes: a node that left the selected state or
// region before the command applied is skipped.
func TestRetry_StateAndRegionGuardsSkipNodesThatMovedSinceSelection(t *testing.T) {
	// At protocol 2 a registration still moves a node that is not leased (regionProtocol).
	h := newHarnessAt(t, regionProtocol-1)
	h.register(t0, "eu", "a", "b")
	at := abandon(t, h, t0, "a")
	at = abandon(t, h, at, "b")
	h.register(at.Add(time.Hour), "us", "b") // b moved region (it stays abandoned)
	res := mustResult[*RetryResult](t, h.retry(at.Add(time.Hour), Retry{Region: "eu", State: api.StateGone, Nodes: []string{"a"}}))
	if len(res.Retried) != 0 || len(res.Rejected) != 1 || !errors.Is(res.Rejected[0].Err, ErrNotRetryable) {
		t.Errorf("state guard: %+v", res)
	}
	res = mustResult[*RetryResult](t, h.retry(at.Add(time.Hour), Retry{Region: "eu", State: api.StateAbandoned, Nodes: []string{"a", "b"}}))
	if len(res.Retried) != 1 || res.Retried[0].Identity != "a" || len(res.Rejected) != 1 || res.Rejected[0].Identity != "b" {
		t.Errorf("region guard: %+v", res)
	}
}

func TestRetry_RefusesABadCommandWhole(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a")
	big := make([]string, MaxBatch+1)
	for i := range big {
		big[i] = fmt.Sprintf("n%d", i)
	}
	for name, c := range map[string]Retry{
		"too many":     {Nodes: big},
		"no nodes":     {},
		"guard state":  {Nodes: []string{"a"}, State: api.StateProvisioned},
		"listed twice": {Nodes: []string{"a", "a"}},
		"empty id":     {Nodes: []string{""}},
		"no time":      {Nodes: []string{"a"}},
	} {
		at := t0
		if name == "no time" {
			at = time.Time{}
		}
		mustErr(t, h.retry(at, c), ErrBadCommand)
	}
}

func TestPlanRetry_SelectsARegionsNodesInAStateUpToTheLimit(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "e1", "e2", "e3", "e4")
	h.register(t0, "us", "u1")
	at := t0
	for _, id := range []string{"e1", "e3", "e4", "u1"} {
		at = abandon(t, h, at, id)
	}
	p, err := h.l.PlanRetry(RetrySelection{Region: "eu", State: api.StateAbandoned, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Nodes) != 2 || p.Nodes[0].Identity != "e1" || p.Nodes[1].Identity != "e3" || !p.More {
		t.Errorf("limit 2: %+v", p)
	}
	p, err = h.l.PlanRetry(RetrySelection{Region: "eu", State: api.StateAbandoned, Limit: 3})
	if err != nil || len(p.Nodes) != 3 || p.More {
		t.Errorf("limit 3: %+v %v", p, err)
	}
	if _, err := h.l.PlanRetry(RetrySelection{Region: "mars", State: api.StateAbandoned, Limit: 3}); !errors.Is(err, ErrUnknownRegion) {
		t.Errorf("unknown region: %v", err)
	}
	// Named nodes: the whole selection is refused, naming each node and why.
	_, err = h.l.PlanRetry(RetrySelection{Nodes: []string{"e1", "e2", "ghost"}})
	if !errors.Is(err, ErrNotRetryable) || !contains(err.Error(), "e2", "waiting", "ghost", "unknown node") {
		t.Errorf("named: %v", err)
	}
	p, err = h.l.PlanRetry(RetrySelection{Nodes: []string{"u1", "e1"}})
	if err != nil || len(p.Nodes) != 2 || p.Nodes[0].Identity != "u1" || p.Nodes[0].From != api.StateAbandoned {
		t.Errorf("named plan: %+v %v", p, err)
	}
}

func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// A lock_held result means another worker holds go-choria's lock on the node for a full window.
// The operator's retry skips backoff, not that lock: no edge, the reporting one included, is
// offered the node before the window ends, and it is offered once it has.
func TestRetry_NodeAbandonedOnLockHeldWaitsOutTheLockWindow(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "n1")
	at := t0
	for h.node("n1").Attempts < testPolicy().MaxAttempts-1 {
		at = at.Add(10 * time.Second)
		ls := h.grant(at, "edge-a", "eu", 1)
		mustResult[*ReportResult](t, h.report(at, ls, api.OutcomeFailed, "n1"))
	}
	locked := at.Add(10 * time.Second)
	ls := h.grant(locked, "edge-a", "eu", 1)
	mustResult[*ReportResult](t, h.report(locked, ls, api.OutcomeLockHeld, "n1"))
	if n := h.node("n1"); n.State != api.StateAbandoned {
		t.Fatalf("after the last attempt ended on lock_held: %s, want abandoned", n.State)
	}
	mustResult[*RetryResult](t, h.retry(locked.Add(time.Second), Retry{Nodes: []string{"n1"}}))
	windowEnd := locked.Add(testPolicy().LockWindow)
	for _, at := range []time.Time{locked.Add(time.Second), windowEnd.Add(-time.Nanosecond)} {
		for _, e := range []string{"edge-a", "edge-b"} {
			if g := h.grant(at, e, "eu", 1); g != nil {
				t.Fatalf("%s was granted %v at %s, inside the lock window that ends %s", e, g.Nodes, at, windowEnd)
			}
		}
	}
	if g := h.grant(windowEnd, "edge-b", "eu", 1); g == nil || g.Nodes[0] != "n1" {
		t.Fatalf("grant at the window's end: %+v, want n1", g)
	}
}

// A retry whose answer was lost comes again with the same request id: the nodes it moved are
// answered as moved (not refused as waiting) and are not moved twice; RetriedBy lists them until
// the record is forgotten after Keep.
func TestRetry_SameRequestIDAgainAnswersWhatItMovedOnce(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "n1", "n2", "n3")
	at := abandon(t, h, t0, "n1")
	at = abandon(t, h, at, "n2")
	at = at.Add(time.Second)
	cmd := Retry{Nodes: []string{"n1"}, RequestID: "op-1", Keep: time.Minute}
	first := mustResult[*RetryResult](t, h.retry(at, cmd))
	if len(first.Retried) != 1 || first.Retried[0].From != api.StateAbandoned {
		t.Fatalf("first retry: %+v", first)
	}
	history := len(h.node("n1").History)

	// Again, now naming n2 beside it (a later command of the same request).
	cmd.Nodes = []string{"n1", "n2"}
	again := mustResult[*RetryResult](t, h.retry(at.Add(time.Second), cmd))
	if len(again.Rejected) != 0 || len(again.Retried) != 2 {
		t.Fatalf("same request again: %+v, want n1 answered as before and n2 moved", again)
	}
	if got := again.Retried[0]; got != first.Retried[0] {
		t.Fatalf("n1 answered as %+v, want what the first command moved: %+v", got, first.Retried[0])
	}
	if n := h.node("n1"); len(n.History) != history || n.State != api.StateWaiting {
		t.Fatalf("n1 moved twice: %d history entries, want %d (%+v)", len(n.History), history, n)
	}
	done, err := h.l.RetriedBy("op-1")
	if err != nil || len(done) != 2 || done[0].Identity != "n1" || done[1].Identity != "n2" {
		t.Fatalf("RetriedBy: %+v %v", done, err)
	}

	// Another request id is another retry: n1 waits, so it is refused by name.
	other := mustResult[*RetryResult](t, h.retry(at.Add(2*time.Second), Retry{Nodes: []string{"n1"}, RequestID: "op-2", Keep: time.Minute}))
	if len(other.Retried) != 0 || len(other.Rejected) != 1 || !errors.Is(other.Rejected[0].Err, ErrNotRetryable) {
		t.Fatalf("another request for a waiting node: %+v", other)
	}
	// Past Keep the record is forgotten (by the next record written).
	at = abandon(t, h, at.Add(2*time.Minute), "n3")
	mustResult[*RetryResult](t, h.retry(at.Add(time.Second), Retry{Nodes: []string{"n3"}, RequestID: "op-3", Keep: time.Minute}))
	if done, err := h.l.RetriedBy("op-1"); err != nil || len(done) != 0 {
		t.Fatalf("RetriedBy after Keep: %+v %v", done, err)
	}
}

// TestRetry_AFailedNodeWaitingForItsBackoffIsRetriedFromProtocol3: a node that failed and waits
// for its backoff (waiting, attempts above 0) is retried like an abandoned one: attempts reset,
// no backoff, go-choria's lock kept; a waiting node that never failed is refused, and so is a
// failed one below protocol 3, where the older build refuses every waiting node.
func TestRetry_AFailedNodeWaitingForItsBackoffIsRetriedFromProtocol3(t *testing.T) {
	for _, v := range []int{retryFailedProtocol - 1, Protocol} {
		h := newHarnessAt(t, v)
		h.register(t0, "eu", "f", "fresh")
		ls := h.grant(t0, "edge-a", "eu", 1) // f
		h.report(t0, ls, api.OutcomeFailed, ls.Nodes[0])
		failed := h.node("f")
		if failed.State != api.StateWaiting || failed.Attempts != 1 || !failed.NotBefore.After(t0) {
			t.Fatalf("f after a failure: %+v", failed)
		}
		res := mustResult[*RetryResult](t, h.retry(t0, Retry{Nodes: []string{"f", "fresh"}}))
		if v < retryFailedProtocol {
			if len(res.Retried) != 0 || len(res.Rejected) != 2 {
				t.Fatalf("protocol %d: %+v, want both refused", v, res)
			}
			continue
		}
		if len(res.Retried) != 1 || res.Retried[0].Identity != "f" || len(res.Rejected) != 1 || res.Rejected[0].Identity != "fresh" ||
			!strings.Contains(res.Rejected[0].Reason, "has not failed") {
			t.Fatalf("protocol %d: %+v, want f retried and fresh refused", v, res)
		}
		if n := h.node("f"); n.State != api.StateWaiting || n.Attempts != 0 || n.NotBefore.After(t0) || n.LockEdge != "edge-a" {
			t.Fatalf("f after the retry: %+v", n)
		}
	}
}

// lockHeld grants node id of region eu to edge at at and records the edge's lock_held result: go-choria's
// lock is another caller's for a full window from at.
func lockHeld(t *testing.T, h *harness, at time.Time, edge, id string) {
	t.Helper()
	ls := h.grant(at, edge, "eu", 1)
	if ls == nil || !slices.Equal(ls.Nodes, []string{id}) {
		t.Fatalf("grant at %s: %+v, want %s", at, ls, id)
	}
	mustResult[*ReportResult](t, h.report(at, ls, api.OutcomeLockHeld, id))
}

// TestRetry_KeepsTheLockHeldWindowOfAWaitingNode: after a lock_held result another caller holds
// go-choria's lock for a full window, and a waiting node's retry skips its backoff but not that
// window: no edge is offered the node before the window ends. Below heldLockProtocol the retry
// offers it at once, as the builds before applied it.
func TestRetry_KeepsTheLockHeldWindowOfAWaitingNode(t *testing.T) {
	for _, v := range []int{heldLockProtocol - 1, heldLockProtocol} {
		h := newHarnessAt(t, v)
		h.register(t0, "eu", "n1")
		lockHeld(t, h, t0, "edge-a", "n1")
		if n := h.node("n1"); n.State != api.StateWaiting || n.Attempts != 1 {
			t.Fatalf("protocol %d: n1 after lock_held: %+v", v, n)
		}
		at := t0.Add(time.Second)
		mustResult[*RetryResult](t, h.retry(at, Retry{Nodes: []string{"n1"}}))
		g := h.grant(at, "edge-b", "eu", 1)
		if v < heldLockProtocol {
			if g == nil || !slices.Equal(g.Nodes, []string{"n1"}) {
				t.Fatalf("protocol %d: grant after the retry: %+v, want n1 at once (the older rule)", v, g)
			}
			continue
		}
		windowEnd := t0.Add(testPolicy().LockWindow)
		if g != nil {
			t.Fatalf("protocol %d: edge-b was granted %v at %s, inside the lock window that ends %s", v, g.Nodes, at, windowEnd)
		}
		for _, e := range []string{"edge-a", "edge-b"} {
			if g := h.grant(windowEnd.Add(-time.Nanosecond), e, "eu", 1); g != nil {
				t.Fatalf("protocol %d: %s was granted %v inside the lock window that ends %s", v, e, g.Nodes, windowEnd)
			}
		}
		if n := h.node("n1"); n.Attempts != 0 || n.LastError != "" {
			t.Fatalf("protocol %d: n1 after the retry: %+v, want its attempts reset", v, n)
		}
		if g := h.grant(windowEnd, "edge-b", "eu", 1); g == nil || !slices.Equal(g.Nodes, []string{"n1"}) {
			t.Fatalf("protocol %d: grant at the window's end: %+v, want n1", v, g)
		}
	}
}

// TestRetry_KeepsALockHeldWindowRecordedBeforeTheProtocolRaise: a lock_held result recorded at
// the protocol before, whose window lives only in the node's not-before time, is kept by a retry
// applied after the raise.
func TestRetry_KeepsALockHeldWindowRecordedBeforeTheProtocolRaise(t *testing.T) {
	h := newHarnessAt(t, heldLockProtocol-1)
	h.register(t0, "eu", "n1")
	lockHeld(t, h, t0, "edge-a", "n1")
	mustResult[*ProtocolResult](t, h.apply(&SetProtocol{Version: heldLockProtocol}))
	at := t0.Add(time.Second)
	mustResult[*RetryResult](t, h.retry(at, Retry{Nodes: []string{"n1"}}))
	windowEnd := t0.Add(testPolicy().LockWindow)
	if g := h.grant(windowEnd.Add(-time.Nanosecond), "edge-b", "eu", 1); g != nil {
		t.Fatalf("edge-b was granted %v inside the lock window that ends %s", g.Nodes, windowEnd)
	}
	if g := h.grant(windowEnd, "edge-b", "eu", 1); g == nil || !slices.Equal(g.Nodes, []string{"n1"}) {
		t.Fatalf("grant at the window's end: %+v, want n1", g)
	}
}
