// SPDX-License-Identifier: Apache-2.0

package monitor_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/seed96588659/muster/edge/monitor"
)

type fakeEdge struct {
	ready, paused atomic.Bool
	election      atomic.Value // string
}

func (f *fakeEdge) Ready() bool         { return f.ready.Load() }
func (f *fakeEdge) Paused() bool        { return f.paused.Load() }
func (f *fakeEdge) ClusterPaused() bool { return false }
func (f *fakeEdge) Election() string {
	s, _ := f.election.Load().(string)
	return s
}
func (f *fakeEdge) Pause()  { f.paused.Store(true) }
func (f *fakeEdge) Resume() { f.paused.Store(false) }

func call(t *testing.T, h http.Handler, method, path, token string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

func TestMonitor_PauseNeedsTheToken(t *testing.T) {
	e := &fakeEdge{}
	h := monitor.Handler(e, http.NotFoundHandler(), "s3cret-token")
	if code, _ := call(t, h, "POST", "/pause", ""); code != http.StatusUnauthorized {
		t.Fatalf("pause without token: %d, want 401", code)
	}
	if code, _ := call(t, h, "POST", "/pause", "wrong"); code != http.StatusUnauthorized || e.Paused() {
		t.Fatalf("pause with a wrong token: %d paused=%v, want 401 and not paused", code, e.Paused())
	}
	if code, _ := call(t, h, "POST", "/pause", "s3cret-token"); code != http.StatusOK || !e.Paused() {
		t.Fatalf("pause: %d paused=%v", code, e.Paused())
	}
	if code, _ := call(t, h, "POST", "/resume", "s3cret-token"); code != http.StatusOK || e.Paused() {
		t.Fatalf("resume: %d paused=%v", code, e.Paused())
	}
}

func TestMonitor_NoTokenDisablesPause(t *testing.T) {
	e := &fakeEdge{}
	h := monitor.Handler(e, http.NotFoundHandler(), "")
	if code, body := call(t, h, "POST", "/pause", ""); code != http.StatusForbidden || !strings.Contains(body, "pause_token") || e.Paused() {
		t.Fatalf("pause with no token configured: %d %s paused=%v", code, body, e.Paused())
	}
}

func TestMonitor_ReadyFollowsTheEdge(t *testing.T) {
	e := &fakeEdge{}
	h := monitor.Handler(e, http.NotFoundHandler(), "")
	if code, _ := call(t, h, "GET", "/readyz", ""); code != http.StatusServiceUnavailable {
		t.Fatalf("readyz before start: %d", code)
	}
	e.ready.Store(true)
	if code, _ := call(t, h, "GET", "/readyz", ""); code != http.StatusOK {
		t.Fatalf("readyz running: %d", code)
	}
	if code, _ := call(t, h, "GET", "/healthz", ""); code != http.StatusOK {
		t.Fatalf("healthz: %d", code)
	}
}

// The auth scheme is case-insensitive (RFC 7235 section 2.1, RFC 6750 section 2.1): curl users
// and proxies write "bearer".
func TestMonitor_PauseTakesTheBearerSchemeInAnyCase(t *testing.T) {
	for _, scheme := range []string{"bearer", "BEARER", "BeArEr"} {
		e := &fakeEdge{}
		h := monitor.Handler(e, http.NotFoundHandler(), "s3cret-token")
		req := httptest.NewRequest("POST", "/pause", nil)
		req.Header.Set("Authorization", scheme+" s3cret-token")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !e.Paused() {
			t.Errorf("pause with scheme %q: %d paused=%v, want 200 and paused", scheme, rec.Code, e.Paused())
		}
	}
}

// TestMonitor_AFailingCheckMakesTheEdgeNotReadyWithItsReason: a running edge is not ready while a
// check fails (a refused coordinator credential), and says why; ready again once it passes.
func TestMonitor_AFailingCheckMakesTheEdgeNotReadyWithItsReason(t *testing.T) {
	e := &fakeEdge{}
	e.ready.Store(true)
	var refused atomic.Bool
	refused.Store(true)
	h := monitor.Handler(e, http.NotFoundHandler(), "", func() error {
		if refused.Load() {
			return errors.New("the coordinators refuse this edge's credential")
		}
		return nil
	})
	if code, body := call(t, h, "GET", "/readyz", ""); code != http.StatusServiceUnavailable || !strings.Contains(body, "refuse this edge's credential") {
		t.Fatalf("readyz with a failing check: %d %s", code, body)
	}
	refused.Store(false)
	if code, body := call(t, h, "GET", "/readyz", ""); code != http.StatusOK {
		t.Fatalf("readyz once the check passes: %d %s", code, body)
	}
}

// TestMonitor_HealthzAndPauseSayWhereTheEdgeStandsInTheElection: an edge with leader_election
// says in /healthz whether it leads, and, while it does not, /readyz and GET /pause say it is
// paused by the election; an edge without it says nothing of an election.
func TestMonitor_HealthzAndPauseSayWhereTheEdgeStandsInTheElection(t *testing.T) {
	e := &fakeEdge{}
	e.ready.Store(true)
	h := monitor.Handler(e, http.NotFoundHandler(), "")
	if _, body := call(t, h, "GET", "/healthz", ""); strings.Contains(body, "election") {
		t.Fatalf("healthz without leader_election: %s", body)
	}
	e.election.Store("candidate")
	if _, body := call(t, h, "GET", "/healthz", ""); !strings.Contains(body, `"election":"candidate"`) {
		t.Fatalf("healthz of a candidate: %s", body)
	}
	for _, path := range []string{"/readyz", "/pause"} {
		if code, body := call(t, h, "GET", path, ""); code != http.StatusOK || !strings.Contains(body, `"paused":true`) || !strings.Contains(body, `"paused_by_election":true`) {
			t.Fatalf("%s of a candidate: %d %s", path, code, body)
		}
	}
	e.election.Store("leader")
	if _, body := call(t, h, "GET", "/healthz", ""); !strings.Contains(body, `"election":"leader"`) {
		t.Fatalf("healthz of the leader: %s", body)
	}
	if _, body := call(t, h, "GET", "/pause", ""); !strings.Contains(body, `"paused":false`) || !strings.Contains(body, `"paused_by_election":false`) {
		t.Fatalf("pause of the leader: %s", body)
	}
}
