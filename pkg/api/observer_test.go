// SPDX-License-Identifier: Apache-2.0

package api

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
)

// seenCall is what a test observer was told of one call.
type seenCall struct {
	kind     CallKind
	req      any
	resp     any
	err      error
	returned bool
}

type callLog struct {
	mu    sync.Mutex
	calls []*seenCall
}

func (l *callLog) observe(kind CallKind, req any) func(any, error) {
	c := &seenCall{kind: kind, req: req}
	l.mu.Lock()
	l.calls = append(l.calls, c)
	l.mu.Unlock()
	return func(resp any, err error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		c.resp, c.err, c.returned = resp, err, true
	}
}

// A retry on another member within one call is one observed call: the request the observer
// sees is the one sent, request id included, and the answer is the last attempt's.
func TestClient_ObserverSeesOneCallAcrossALeaderHop(t *testing.T) {
	leader := newMember(t, leaderHandler(t))
	follower := newMember(t, notLeader(leader.srv.URL))
	var log callLog
	c, err := NewClient([]string{follower.srv.URL, leader.srv.URL}, WithToken(testToken), WithCallObserver(log.observe))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := acquire(c, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if follower.calls.Load() != 1 || leader.calls.Load() != 1 {
		t.Fatalf("follower %d calls, leader %d: the call did not hop", follower.calls.Load(), leader.calls.Load())
	}
	if len(log.calls) != 1 {
		t.Fatalf("observer told of %d calls, want 1", len(log.calls))
	}
	got := log.calls[0]
	req, ok := got.req.(AcquireRequest)
	if got.kind != CallAcquire || !ok || req.RequestID == "" || req.Edge != "e1" {
		t.Errorf("observed %s with %#v, want an acquire with its request id", got.kind, got.req)
	}
	ans, ok := got.resp.(AcquireResponse)
	if !got.returned || got.err != nil || !ok || ans.Lease == nil || ans.Lease.Token != resp.Lease.Token {
		t.Errorf("observed return %#v (err %v), want the answer %#v", got.resp, got.err, resp)
	}
}

// A refusal reaches the observer as the error the caller gets, with its code.
func TestClient_ObserverSeesARefusal(t *testing.T) {
	m := newMember(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(ErrorBody{Error: "no such lease", Code: CodeUnknownLease})
	})
	var log callLog
	c, _ := NewClient([]string{m.srv.URL}, WithToken(testToken), WithCallObserver(log.observe))
	_, err := c.Report(context.Background(), ReportRequest{LeaseID: "l-1", Token: 4, Edge: "e1", Region: "ams",
		Results: []NodeResult{{Identity: "n1", Outcome: OutcomeProvisioned}}})
	if !IsCode(err, CodeUnknownLease) {
		t.Fatalf("report: %v, want unknown_lease", err)
	}
	if len(log.calls) != 1 {
		t.Fatalf("observer told of %d calls, want 1", len(log.calls))
	}
	got := log.calls[0]
	req, _ := got.req.(ReportRequest)
	if got.kind != CallReport || req.RequestID == "" || req.LeaseID != "l-1" {
		t.Errorf("observed %s with %#v", got.kind, got.req)
	}
	if !got.returned || got.resp != nil || !IsCode(got.err, CodeUnknownLease) {
		t.Errorf("observed return %#v, %v; want no answer and the refusal", got.resp, got.err)
	}
}

// Calls that change nothing in the ledger are not observed.
func TestClient_ObserverSkipsHeartbeats(t *testing.T) {
	m := newMember(t, func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(HeartbeatResponse{})
	})
	var log callLog
	c, _ := NewClient([]string{m.srv.URL}, WithToken(testToken), WithCallObserver(log.observe))
	if _, err := c.Heartbeat(context.Background(), HeartbeatRequest{Edge: "e1", Region: "ams"}); err != nil {
		t.Fatal(err)
	}
	if len(log.calls) != 0 {
		t.Errorf("observer told of %d calls for a heartbeat", len(log.calls))
	}
}
