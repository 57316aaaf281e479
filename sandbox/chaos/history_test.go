// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"

	"github.com/seed96588659/muster/edge/callhistory"
	"github.com/seed96588659/muster/pkg/api"
)

// historyWriter writes an edge's call history file by hand, with chosen clock readings.
type historyWriter struct {
	t    *testing.T
	path string
	edge string
	seq  uint64
}

func newHistoryWriter(t *testing.T, dir, edge string) *historyWriter {
	return &historyWriter{t: t, path: filepath.Join(dir, edge+".calls.jsonl"), edge: edge}
}

func (r *historyWriter) line(rec callhistory.Record) {
	r.t.Helper()
	rec.Run, rec.Edge = "run-"+r.edge, r.edge
	b, err := json.Marshal(rec)
	if err != nil {
		r.t.Fatal(err)
	}
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		r.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(append(b, '\n')); err != nil {
		r.t.Fatal(err)
	}
}

func raw(t *testing.T, v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// call records a call made at call; answered with resp at ret (ret 0: no return record), or
// failed with code (and a message) when code or fail is set.
func (r *historyWriter) call(kind api.CallKind, call, ret int64, req, resp any, code api.Code, fail string) {
	r.seq++
	r.line(callhistory.Record{Seq: r.seq, Phase: callhistory.PhaseCall, Kind: kind, Mono: call, Request: raw(r.t, req)})
	if ret == 0 {
		return
	}
	rec := callhistory.Record{Seq: r.seq, Phase: callhistory.PhaseReturn, Kind: kind, Mono: ret, Code: code, Error: fail}
	if fail == "" {
		rec.Response = raw(r.t, resp)
	}
	r.line(rec)
}

func regNodes(edge string, ids ...string) api.RegisterRequest {
	req := api.RegisterRequest{Region: "eu", Edge: edge}
	for _, id := range ids {
		req.Nodes = append(req.Nodes, api.RegisterNode{Identity: id})
	}
	return req
}

func apiLease(id string, token uint64, edge string, nodes ...string) *api.Lease {
	return &api.Lease{ID: id, Token: token, Edge: edge, Region: "eu", Nodes: nodes}
}

// twoEdges writes a round of two edges: e1 is granted a and b, renews, provisions a, renews (b
// left), and is killed while reporting b; e2's first acquire times out, then a is registered
// again and granted to it. When doubleGrant, e2 is granted b as well while e1's lease still
// lists b afterwards.
func twoEdges(t *testing.T, doubleGrant bool) []string {
	dir := t.TempDir()
	e1, e2 := newHistoryWriter(t, dir, "e1"), newHistoryWriter(t, dir, "e2")
	l1 := apiLease("l1", 5, "e1", "a", "b")
	e1.call(api.CallRegister, 10, 11, regNodes("e1", "a", "b"), api.RegisterResponse{Added: 2}, "", "")
	e1.call(api.CallAcquire, 12, 14, api.AcquireRequest{Edge: "e1", Region: "eu", MaxNodes: 50, RequestID: "q1"}, api.AcquireResponse{Lease: l1}, "", "")
	e1.call(api.CallRenew, 15, 16, api.RenewRequest{LeaseID: "l1", Token: 5, Edge: "e1", Region: "eu"}, api.RenewResponse{Lease: *l1}, "", "")
	e1.call(api.CallReport, 17, 18, api.ReportRequest{LeaseID: "l1", Token: 5, Edge: "e1", Region: "eu", RequestID: "r1",
		Results: []api.NodeResult{{Identity: "a", Outcome: api.OutcomeProvisioned}}}, api.ReportResponse{Applied: []string{"a"}}, "", "")
	e1.call(api.CallRenew, 19, 20, api.RenewRequest{LeaseID: "l1", Token: 5, Edge: "e1", Region: "eu"}, api.RenewResponse{Lease: *apiLease("l1", 5, "e1", "b")}, "", "")
	e1.call(api.CallReport, 25, 0, api.ReportRequest{LeaseID: "l1", Token: 5, Edge: "e1", Region: "eu", RequestID: "r2",
		Results: []api.NodeResult{{Identity: "b", Outcome: api.OutcomeFailed}}}, nil, "", "")
	e2.call(api.CallAcquire, 13, 30, api.AcquireRequest{Edge: "e2", Region: "eu", MaxNodes: 50, RequestID: "q2"}, nil, "", "context deadline exceeded")
	e2.call(api.CallRegister, 21, 22, regNodes("e2", "a"), api.RegisterResponse{Requeued: 1}, "", "")
	granted := apiLease("l2", 9, "e2", "a")
	if doubleGrant {
		granted.Nodes = append(granted.Nodes, "b")
		e1.call(api.CallRenew, 26, 27, api.RenewRequest{LeaseID: "l1", Token: 5, Edge: "e1", Region: "eu"}, api.RenewResponse{Lease: *apiLease("l1", 5, "e1", "b")}, "", "")
	}
	e2.call(api.CallAcquire, 23, 24, api.AcquireRequest{Edge: "e2", Region: "eu", MaxNodes: 50, RequestID: "q3"}, api.AcquireResponse{Lease: granted}, "", "")
	e2.call(api.CallRenew, 31, 32, api.RenewRequest{LeaseID: "l2", Token: 9, Edge: "e2", Region: "eu"}, nil, api.CodeLeaseExpired, "409 lease_expired")
	return []string{e1.path, e2.path}
}

func nodeOps(ops []porcupine.Operation, node string) []string {
	var out []string
	for _, op := range ops {
		if in := op.Input.(nodeCall); in.Node == node {
			out = append(out, string(in.Kind))
		}
	}
	slices.Sort(out)
	return out
}

// The files of two edges become one history per node: a renewal concerns every node of its
// lease, a grant whose answer never came concerns none, and the whole is linearizable.
func TestHistory_ProjectsCallsOntoNodes(t *testing.T) {
	log := newCallLog()
	if err := log.read(twoEdges(t, false)); err != nil {
		t.Fatal(err)
	}
	calls := log.window(0, 0)
	if len(calls) != 10 {
		t.Fatalf("%d calls, want 10", len(calls))
	}
	ops := project(calls, &seedRead{Start: 1, End: 2, Nodes: map[string]api.Node{"a": {Identity: "a", State: api.StateProvisioned}, "z": {Identity: "z", State: api.StateProvisioned}}}, nil)
	if got, want := nodeOps(ops, "a"), []string{"acquire", "acquire", "observe", "register", "register", "renew", "renew", "renew", "report"}; !slices.Equal(got, want) {
		t.Errorf("node a: %v, want %v", got, want)
	}
	if got, want := nodeOps(ops, "b"), []string{"acquire", "register", "renew", "renew", "report"}; !slices.Equal(got, want) {
		t.Errorf("node b: %v, want %v", got, want)
	}
	if got := nodeOps(ops, "z"); len(got) != 0 {
		t.Errorf("node z, which no call names, is checked: %v", got)
	}
	lc := checkLinearizable(ops, len(calls), LinTimeout, filepath.Join(t.TempDir(), "lin.html"))
	if lc.Result != porcupine.Ok || lc.Failed() || lc.Nodes != 2 {
		t.Fatalf("check: %+v", lc)
	}
}

// Two edges granted one node, the first lease's renewal listing it after the second grant: the
// check fails on that node alone and writes porcupine's visualization of it.
func TestHistory_DoubleGrantFailsWithVisualization(t *testing.T) {
	log := newCallLog()
	if err := log.read(twoEdges(t, true)); err != nil {
		t.Fatal(err)
	}
	calls := log.window(0, 0)
	html := filepath.Join(t.TempDir(), "rounds", "1", "linearizability.html")
	lc := checkLinearizable(project(calls, nil, nil), len(calls), LinTimeout, html)
	if lc.Result != porcupine.Illegal || !lc.Failed() || !slices.Equal(lc.Illegal, []string{"b"}) {
		t.Fatalf("check: result %s, illegal %v, err %v", lc.Result, lc.Illegal, lc.Err)
	}
	page, err := os.ReadFile(lc.Visualization)
	if err != nil || lc.Visualization != html {
		t.Fatalf("visualization %q: %v", lc.Visualization, err)
	}
	if !strings.Contains(string(page), "renewed, node listed") || strings.Contains(string(page), `a: e1`) {
		t.Errorf("the visualization does not show node b's calls alone")
	}
	if len(lc.Evidence) != 1 || !strings.Contains(lc.Evidence[0], "node b") {
		t.Errorf("evidence %q", lc.Evidence)
	}
}

// A round checks every call that may have taken effect after its ledger read: answered calls
// that overlap it, and unanswered ones from the round before, not older.
func TestHistory_WindowKeepsCallsThatMayTakeEffectInTheRound(t *testing.T) {
	log := &callLog{calls: []*edgeCall{
		{Kind: api.CallRenew, Call: 10, Return: 20},     // before the round
		{Kind: api.CallRenew, Call: 90, Return: 110},    // overlaps its start
		{Kind: api.CallRenew, Call: 120, Return: 130},   // in it
		{Kind: api.CallReport, Call: 60, Return: never}, // unanswered, from the round before
		{Kind: api.CallReport, Call: 40, Return: never}, // unanswered, older
	}}
	got := log.window(100, 50)
	var calls []int64
	for _, c := range got {
		calls = append(calls, c.Call)
	}
	if !slices.Equal(calls, []int64{90, 120, 60}) {
		t.Errorf("window holds the calls made at %v, want 90, 120, 60", calls)
	}
}

// A report whose answer was lost in one round is retried with its request id in the next. The
// ledger applied it before the round's read and answers the retry with its first answer, though
// the node has been provisioned under another lease since: a history that starts at the read
// must admit that answer.
func TestHistory_ARetrySentBeforeTheRoundMayGetItsFirstAnswer(t *testing.T) {
	dir := t.TempDir()
	e2 := newHistoryWriter(t, dir, "e2")
	released := api.ReportRequest{LeaseID: "l639", Token: 639, Edge: "e2", Region: "eu", RequestID: "r41",
		Results: []api.NodeResult{{Identity: "a", Outcome: api.OutcomeReleased}}}
	e2.call(api.CallReport, 10, 0, released, nil, "", "")
	e2.call(api.CallReport, 95, 103, released, api.ReportResponse{Applied: []string{"a"}}, "", "")
	e2.call(api.CallRegister, 104, 105, regNodes("e2", "a"), api.RegisterResponse{}, "", "")
	log := newCallLog()
	if err := log.read([]string{e2.path}); err != nil {
		t.Fatal(err)
	}
	calls := log.window(100, 50)
	seed := &seedRead{Start: 101, End: 102, Nodes: map[string]api.Node{"a": {Identity: "a", State: api.StateProvisioned}}}
	lc := checkLinearizable(project(calls, seed, log.sentBefore(100)), len(calls), LinTimeout, filepath.Join(t.TempDir(), "lin.html"))
	if lc.Result != porcupine.Ok || lc.Failed() {
		t.Fatalf("check: result %s, illegal %v, evidence %q", lc.Result, lc.Illegal, lc.Evidence)
	}
}
