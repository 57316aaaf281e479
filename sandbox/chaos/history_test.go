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

// sendReport records report req over [call, ret], answered with resp: alone, or carried by an
// acquire of the same edge that grants nothing.
func (r *historyWriter) sendReport(carried bool, call, ret int64, req api.ReportRequest, resp api.ReportResponse) {
	if !carried {
		r.call(api.CallReport, call, ret, req, resp, "", "")
		return
	}
	acq := api.AcquireRequest{Edge: req.Edge, Region: req.Region, MaxNodes: 50, RequestID: "q-" + req.RequestID, Reports: []api.ReportRequest{req}}
	r.call(api.CallAcquire, call, ret, acq, api.AcquireResponse{CarriesReports: true, Reports: []api.ReportAnswer{{RequestID: req.RequestID, ReportResponse: resp}}}, "", "")
}

func reportOf(l *api.Lease, request string, node string, o api.Outcome) api.ReportRequest {
	return api.ReportRequest{LeaseID: l.ID, Token: l.Token, Edge: l.Edge, Region: "eu", RequestID: request, Results: []api.NodeResult{{Identity: node, Outcome: o}}}
}

func appliedOf(nodes ...string) api.ReportResponse { return api.ReportResponse{Applied: nodes} }

func checkFiles(t *testing.T, paths ...string) LinCheck {
	t.Helper()
	log := newCallLog()
	if err := log.read(paths); err != nil {
		t.Fatal(err)
	}
	calls := log.window(0, 0)
	return checkLinearizable(project(calls, nil, nil), len(calls), LinTimeout, filepath.Join(t.TempDir(), "lin.html"))
}

// An acquire carrying two reports becomes a report per node over its interval, besides its own
// grant; a carried report the acquire's failure left unanswered may have been applied, so its
// lone retry's answer is its first. The history is linearizable.
func TestHistory_ReportsRideAnAcquire(t *testing.T) {
	dir := t.TempDir()
	e1 := newHistoryWriter(t, dir, "e1")
	l1, l2 := apiLease("l1", 5, "e1", "a", "b"), apiLease("l2", 7, "e1", "b")
	e1.call(api.CallAcquire, 10, 11, api.AcquireRequest{Edge: "e1", Region: "eu", MaxNodes: 2, RequestID: "q1"}, api.AcquireResponse{Lease: l1}, "", "")
	// a provisioned, b released: both carried by the next acquire, which is granted b again.
	ra, rb := reportOf(l1, "r1", "a", api.OutcomeProvisioned), reportOf(l1, "r2", "b", api.OutcomeReleased)
	e1.call(api.CallAcquire, 12, 14, api.AcquireRequest{Edge: "e1", Region: "eu", MaxNodes: 2, RequestID: "q2", Reports: []api.ReportRequest{ra, rb}},
		api.AcquireResponse{Lease: l2, CarriesReports: true, Reports: []api.ReportAnswer{{RequestID: "r1", ReportResponse: appliedOf("a")}, {RequestID: "r2", ReportResponse: appliedOf("b")}}}, "", "")
	// b failed: the acquire carrying it times out, the report goes alone under its request id.
	rf := reportOf(l2, "r3", "b", api.OutcomeFailed)
	e1.call(api.CallAcquire, 20, 30, api.AcquireRequest{Edge: "e1", Region: "eu", MaxNodes: 2, RequestID: "q3", Reports: []api.ReportRequest{rf}}, nil, "", "context deadline exceeded")
	e1.call(api.CallReport, 31, 32, rf, appliedOf("b"), "", "")

	log := newCallLog()
	if err := log.read([]string{e1.path}); err != nil {
		t.Fatal(err)
	}
	calls := log.window(0, 0)
	ops := project(calls, nil, nil)
	if got, want := nodeOps(ops, "a"), []string{"acquire", "report"}; !slices.Equal(got, want) {
		t.Errorf("node a: %v, want %v", got, want)
	}
	if got, want := nodeOps(ops, "b"), []string{"acquire", "acquire", "report", "report", "report"}; !slices.Equal(got, want) {
		t.Errorf("node b: %v, want %v", got, want)
	}
	for _, op := range ops {
		in, out := op.Input.(nodeCall), op.Output.(nodeAnswer)
		if in.Kind != api.CallReport || in.RequestID != "r3" || op.Call != 20 {
			continue
		}
		if out.Kind != unknown || op.Return != never || !strings.Contains(op.Metadata.(string), "carried by acquire q3") {
			t.Errorf("the report the failed acquire carried is %+v over [%d, %d] (%v), want unknown from 20 on", out, op.Call, op.Return, op.Metadata)
		}
	}
	if !log.sentBefore(15)["r1"] {
		t.Error("a carried report's request id is not among those sent before the window")
	}
	lc := checkLinearizable(ops, len(calls), LinTimeout, filepath.Join(t.TempDir(), "lin.html"))
	if lc.Result != porcupine.Ok || lc.Failed() {
		t.Fatalf("check: result %s, illegal %v, evidence %q", lc.Result, lc.Illegal, lc.Evidence)
	}
}

// Each history is checked with its reports sent alone and carried by acquires: carrying changes
// no verdict, so what the model catches in reports it catches in carried ones.
func TestHistory_CarriedReportsAreCheckedAsReports(t *testing.T) {
	l1, l2 := apiLease("l1", 5, "e1", "a"), apiLease("l2", 9, "e2", "a")
	grants := func(e1, e2 *historyWriter) {
		e1.call(api.CallAcquire, 10, 11, api.AcquireRequest{Edge: "e1", Region: "eu", MaxNodes: 1, RequestID: "q1"}, api.AcquireResponse{Lease: l1}, "", "")
		e2.call(api.CallAcquire, 12, 13, api.AcquireRequest{Edge: "e2", Region: "eu", MaxNodes: 1, RequestID: "q2"}, api.AcquireResponse{Lease: l2}, "", "")
	}
	failedUnder := func(l *api.Lease, request string) api.ReportRequest {
		return reportOf(l, request, "a", api.OutcomeFailed)
	}
	cases := []struct {
		name  string
		legal bool
		write func(e1, e2 *historyWriter, carried bool)
	}{{
		name:  "l1 expired before l2 was granted a: l1's result is rejected, l2's applied",
		legal: true,
		write: func(e1, e2 *historyWriter, carried bool) {
			grants(e1, e2)
			e2.sendReport(carried, 14, 15, failedUnder(l2, "r2"), appliedOf("a"))
			e1.sendReport(carried, 16, 17, failedUnder(l1, "r1"), api.ReportResponse{Applied: []string{}, Rejected: []api.RejectedResult{{Identity: "a", Reason: "not held"}}})
		},
	}, {
		name: "a's results applied under two leases: l2's, then l1's after l2 was granted a",
		write: func(e1, e2 *historyWriter, carried bool) {
			grants(e1, e2)
			e2.sendReport(carried, 14, 15, failedUnder(l2, "r2"), appliedOf("a"))
			e1.sendReport(carried, 16, 17, failedUnder(l1, "r1"), appliedOf("a"))
		},
	}, {
		name: "a retry answered otherwise than its first try",
		write: func(e1, e2 *historyWriter, carried bool) {
			grants(e1, e2)
			e2.sendReport(carried, 14, 15, failedUnder(l2, "r2"), appliedOf("a"))
			e2.call(api.CallReport, 16, 17, failedUnder(l2, "r2"), api.ReportResponse{Applied: []string{}, Rejected: []api.RejectedResult{{Identity: "a", Reason: "not held"}}}, "", "")
		},
	}}
	for _, tc := range cases {
		for _, carried := range []bool{false, true} {
			dir := t.TempDir()
			e1, e2 := newHistoryWriter(t, dir, "e1"), newHistoryWriter(t, dir, "e2")
			tc.write(e1, e2, carried)
			lc := checkFiles(t, e1.path, e2.path)
			if lc.Err != nil || (lc.Result == porcupine.Ok) != tc.legal || !tc.legal && !slices.Equal(lc.Illegal, []string{"a"}) {
				t.Errorf("%s (carried %t): result %s, illegal %v, err %v", tc.name, carried, lc.Result, lc.Illegal, lc.Err)
			}
		}
	}
}
