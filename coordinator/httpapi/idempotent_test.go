// SPDX-License-Identifier: Apache-2.0

package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/seed96588659/muster/pkg/api"
)

// answerLost is a server in front of h that serves the first request to path but breaks the
// connection instead of answering it; dropped tells whether it has.
func answerLost(t *testing.T, h http.Handler, path string) (front *httptest.Server, dropped *atomic.Bool) {
	dropped = &atomic.Bool{}
	front = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path || !dropped.CompareAndSwap(false, true) {
			h.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		conn.Close()
	}))
	t.Cleanup(front.Close)
	return front, dropped
}

// TestAcquire_LostAnswerIsRetriedIntoTheSameLease: the coordinator grants a lease but the
// edge never sees the answer (the connection breaks after the grant); the client's retry carries
// the same request id and gets that lease, not a second one holding other nodes.
func TestAcquire_LostAnswerIsRetriedIntoTheSameLease(t *testing.T) {
	ms := cluster(t, 3)
	leader, follower := ms[0], ms[1]
	ctx := ctxT(t)

	// The grant is made and committed; only its answer is lost.
	front, dropped := answerLost(t, follower.srv.Config.Handler, api.PathAcquire)

	nodes := []api.RegisterNode{{Identity: "n1"}, {Identity: "n2"}, {Identity: "n3"}, {Identity: "n4"}}
	if _, err := edgeClient(t, leader.url).Register(ctx, api.RegisterRequest{Region: "ams", Edge: "e1", Nodes: nodes}); err != nil {
		t.Fatal(err)
	}
	// This client knows only the front, so its first acquire goes there.
	edge := edgeClient(t, front.URL)
	got, err := edge.Acquire(ctx, api.AcquireRequest{Edge: "e1", Region: "ams", MaxNodes: 2})
	if err != nil || got.Lease == nil {
		t.Fatalf("acquire: %+v %v", got, err)
	}
	if !dropped.Load() {
		t.Fatal("the first acquire answer was not dropped")
	}
	leases, err := leader.svc.Ledger().Leases()
	if err != nil {
		t.Fatal(err)
	}
	if len(leases) != 1 || leases[0].ID != got.Lease.ID || leases[0].Token != got.Lease.Token || !slices.Equal(leases[0].Nodes, got.Lease.Nodes) {
		t.Fatalf("ledger holds %+v, client got %+v: want exactly the one lease", leases, got.Lease)
	}
	if n := counter(t, leader, "muster_coordinator_lease_replays_total", map[string]string{"member": leader.id}); n != 1 {
		t.Errorf("lease replays counted %v, want 1", n)
	}
	if n := counter(t, leader, "muster_coordinator_lease_grants_total", map[string]string{"member": leader.id}); n != 1 {
		t.Errorf("lease grants counted %v, want 1", n)
	}
}

// TestReport_LostAnswerIsRetriedIntoTheSameOutcomes: the report is applied (and finishes the
// lease) but its answer is lost; the client's retry is answered with the same outcomes, not as a
// stale report of an unknown lease, and nothing is applied twice.
func TestReport_LostAnswerIsRetriedIntoTheSameOutcomes(t *testing.T) {
	ms := cluster(t, 3)
	leader, follower := ms[0], ms[1]
	ctx := ctxT(t)

	front, dropped := answerLost(t, follower.srv.Config.Handler, api.PathReport)

	if _, err := edgeClient(t, leader.url).Register(ctx, api.RegisterRequest{Region: "ams", Edge: "e1", Nodes: []api.RegisterNode{{Identity: "n1"}, {Identity: "n2"}}}); err != nil {
		t.Fatal(err)
	}
	edge := edgeClient(t, front.URL)
	got, err := edge.Acquire(ctx, api.AcquireRequest{Edge: "e1", Region: "ams", MaxNodes: 2})
	if err != nil || got.Lease == nil {
		t.Fatalf("acquire: %+v %v", got, err)
	}
	// A client that knows only the front, so its first report goes there.
	rep, err := edgeClient(t, front.URL).Report(ctx, api.ReportRequest{LeaseID: got.Lease.ID, Token: got.Lease.Token, Edge: "e1", Region: "ams", Results: []api.NodeResult{
		{Identity: got.Lease.Nodes[0], Outcome: api.OutcomeProvisioned},
		{Identity: got.Lease.Nodes[1], Outcome: api.OutcomeFailed, Error: "boom"},
	}})
	if err != nil {
		t.Fatalf("retried report: %v", err)
	}
	if !dropped.Load() {
		t.Fatal("the first report answer was not dropped")
	}
	if !slices.Equal(rep.Applied, got.Lease.Nodes) || len(rep.Rejected) != 0 {
		t.Fatalf("retried report answered %+v, want both nodes applied", rep)
	}
	n, err := leader.svc.Ledger().Node(got.Lease.Nodes[1])
	if err != nil || n.Attempts != 1 {
		t.Fatalf("failed node after a retried report: %+v %v (want attempts 1: applied once)", n, err)
	}
	if v := counter(t, leader, "muster_coordinator_stale_reports_total", map[string]string{"member": leader.id}); v != 0 {
		t.Errorf("stale reports counted %v, want 0", v)
	}
}
