// SPDX-License-Identifier: Apache-2.0

package lease_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/api"
)

// acquireRecorder answers every acquire with answer(req) and keeps the requests.
type acquireRecorder struct {
	mu     sync.Mutex
	got    []api.AcquireRequest
	answer func(api.AcquireRequest) (int, any)
}

func (a *acquireRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req api.AcquireRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || r.URL.Path != api.PathAcquire {
		http.Error(w, "unexpected call", http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	a.got = append(a.got, req)
	a.mu.Unlock()
	status, body := a.answer(req)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func newCarrySource(t *testing.T, answer func(api.AcquireRequest) (int, any)) (*acquireRecorder, *lease.Coordinator) {
	t.Helper()
	rec := &acquireRecorder{answer: answer}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	client, err := api.NewClient([]string{srv.URL}, api.WithAttempts(1))
	if err != nil {
		t.Fatal(err)
	}
	o := lease.DefaultCoordinatorOptions()
	o.Client, o.Edge, o.Region = client, "edge-eu-1", "eu"
	src, err := lease.NewCoordinator(o)
	if err != nil {
		t.Fatal(err)
	}
	return rec, src
}

func twoDeliveries() []lease.Delivery {
	return []lease.Delivery{
		{Lease: api.Lease{ID: "l-1", Token: 3}, Results: []api.NodeResult{{Identity: "a", Outcome: api.OutcomeProvisioned}}, RequestID: "rid-1"},
		{Lease: api.Lease{ID: "l-0", Token: 2}, Results: []api.NodeResult{{Identity: "b", Outcome: api.OutcomeProvisioned}}, RequestID: "rid-2"},
	}
}

// A carried report goes under its own request id as this edge's; its answer is matched to it, a
// refused one reads as stale, and the leader's CarriesReports decides whether the next acquire
// may carry.
func TestCoordinator_AcquireCarriesDeliveriesAndMatchesTheirAnswers(t *testing.T) {
	rec, src := newCarrySource(t, func(req api.AcquireRequest) (int, any) {
		return http.StatusOK, api.AcquireResponse{CarriesReports: true, Reports: []api.ReportAnswer{
			{RequestID: req.Reports[0].RequestID, ReportResponse: api.ReportResponse{Applied: []string{"a"}}},
			{RequestID: req.Reports[1].RequestID, Error: &api.ErrorBody{Error: "unknown lease", Code: api.CodeUnknownLease}},
		}}
	})
	if src.Carries() {
		t.Fatal("the source carries before any answer said the leader takes reports")
	}
	_, answers, err := src.AcquireCarrying(context.Background(), 5, 0, twoDeliveries())
	if err != nil {
		t.Fatal(err)
	}
	sent := rec.got[0].Reports
	if len(sent) != 2 || sent[0].RequestID != "rid-1" || sent[1].RequestID != "rid-2" || sent[0].Edge != "edge-eu-1" || sent[0].Region != "eu" || sent[0].Token != 3 {
		t.Fatalf("carried %+v", sent)
	}
	if !answers[0].Answered || answers[0].Err != nil || !slices.Equal(answers[0].Response.Applied, []string{"a"}) {
		t.Fatalf("first answer %+v", answers[0])
	}
	if !answers[1].Answered || !lease.Stale(answers[1].Err) {
		t.Fatalf("second answer %+v, want a stale refusal", answers[1])
	}
	if !src.Carries() {
		t.Fatal("the leader said it takes reports; the source does not carry")
	}
}

// An older coordinator's answer says nothing of the reports: none is answered (the edge sends
// them alone) and the source stops carrying; one that refuses the field does the same.
func TestCoordinator_OlderLeaderLeavesCarriedReportsUnanswered(t *testing.T) {
	var refuse atomic.Bool
	_, src := newCarrySource(t, func(req api.AcquireRequest) (int, any) {
		if refuse.Load() {
			return http.StatusBadRequest, api.ErrorBody{Error: `unknown field "reports"`, Code: api.CodeUnknownField}
		}
		return http.StatusOK, api.AcquireResponse{CarriesReports: len(req.Reports) == 0}
	})
	if _, _, err := src.AcquireCarrying(context.Background(), 5, 0, nil); err != nil || !src.Carries() {
		t.Fatalf("first answer: carries %v, %v", src.Carries(), err)
	}
	_, answers, err := src.AcquireCarrying(context.Background(), 5, 0, twoDeliveries())
	if err != nil || len(answers) != 2 || answers[0].Answered || answers[1].Answered || src.Carries() {
		t.Fatalf("an answer without reports: %+v, carries %v, %v", answers, src.Carries(), err)
	}
	if _, _, err := src.AcquireCarrying(context.Background(), 5, 0, nil); err != nil || !src.Carries() {
		t.Fatalf("carries %v, %v", src.Carries(), err)
	}
	refuse.Store(true)
	if _, _, err := src.AcquireCarrying(context.Background(), 5, time.Millisecond, twoDeliveries()); !api.IsCode(err, api.CodeUnknownField) || src.Carries() {
		t.Fatalf("a leader refusing the field: carries %v, %v", src.Carries(), err)
	}
}
