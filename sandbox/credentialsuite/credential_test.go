// SPDX-License-Identifier: Apache-2.0

package credentialsuite

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/httpapi"
	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/edge/monitor"
	"github.com/seed96588659/muster/edge/register"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

const (
	rightToken = "the-token-bound-to-e1-0123456789"
	wrongToken = "a-token-nobody-bound-0123456789"
	adminToken = "admin-token-0123456789"
)

// member is one real coordinator member bootstrapped alone, its API behind a handler the test
// swaps to change the edge credentials it accepts (a rotation).
type member struct {
	svc *coordinator.Service
	url string
	api atomic.Pointer[httpapi.Server]
}

func startMember(t *testing.T) *member {
	t.Helper()
	m := &member{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { m.api.Load().ServeHTTP(w, r) }))
	m.url = "http://" + srv.Listener.Addr().String()
	svc, err := coordinator.New(coordinator.Config{ID: "c1", DataDir: t.TempDir(), RaftBind: "127.0.0.1:0", APIAddress: m.url, Bootstrap: true, AdminToken: adminToken})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	m.svc = svc
	m.bind(t, rightToken)
	srv.Start()
	t.Cleanup(srv.Close)
	testkit.WaitFor(t, 30*time.Second, "the member to lead", svc.IsLeader)
	return m
}

// bind makes token the one credential of edge e1 in region eu.
func (m *member) bind(t *testing.T, token string) {
	t.Helper()
	h, err := httpapi.New(m.svc, httpapi.Config{Edges: []httpapi.EdgeCredential{{Token: token, Edge: "e1", Regions: []string{"eu"}}},
		AdminTokens: []string{adminToken}, Errors: coordinator.HTTPErrors()})
	if err != nil {
		t.Fatal(err)
	}
	m.api.Store(h)
}

// ready is an edge that is running: readiness then rests on the monitor's checks.
type ready struct{}

func (ready) Ready() bool         { return true }
func (ready) Paused() bool        { return false }
func (ready) ClusterPaused() bool { return false }
func (ready) Election() string    { return "" }
func (ready) Pause()              {}
func (ready) Resume()             {}

func readyz(t *testing.T, h http.Handler) (int, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	var body map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &body)
	return rec.Code, body
}

func metric(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	fs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if f.GetName() == name {
			m := f.GetMetric()[0]
			if l := m.GetLabel(); len(l) != 1 || l[0].GetName() != "site" || l[0].GetValue() != "eu-1" {
				t.Fatalf("%s labels %v, want site=eu-1", name, l)
			}
			if g := m.GetGauge(); g != nil {
				return g.GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// TestEdge_ARefusedCredentialIsNotReadySaidOnceAndBacksOff: an edge whose coordinator token the
// coordinators do not accept is not ready (with the reason and the remedy), counts the
// refusals, logs one line naming the setting to fix however often its loops call, spaces its
// tries, and is ready again by itself once the coordinators accept its token (rotated back).
func TestEdge_ARefusedCredentialIsNotReadySaidOnceAndBacksOff(t *testing.T) {
	m := startMember(t)
	client, err := api.NewClient([]string{m.url}, api.WithToken(wrongToken), api.WithRetryDelay(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	logger, logs := testkit.NewLogger()
	o := lease.DefaultCoordinatorOptions()
	o.Client, o.Edge, o.Region, o.Logger = client, "e1", "eu", logger
	o.CredentialBackoffMax = 300 * time.Millisecond
	src, err := lease.NewCoordinator(o)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	for _, c := range lease.CredentialMetrics(src, "eu-1") {
		reg.MustRegister(c)
	}
	h := monitor.Handler(ready{}, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), "", src.CredentialReady)

	// The edge's loops as they run: acquire and register as fast as the edge's dispatch and
	// discovery would (a second between failed acquires), heartbeats every 250ms.
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	var calls atomic.Int64
	loop := func(call func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				calls.Add(1)
				if call() != nil {
					select {
					case <-ctx.Done():
					case <-time.After(20 * time.Millisecond):
					}
				}
			}
		}()
	}
	loop(func() error { _, err := src.Acquire(ctx, 10, 0); return err })
	loop(func() error { _, err := src.Register(ctx, []register.Found{{Identity: "n1"}}); return err })
	wg.Add(1)
	go func() { defer wg.Done(); src.WatchPause(ctx, func(bool, api.PauseMark) {}) }()

	testkit.WaitFor(t, 30*time.Second, "the edge to be not ready for its credential", func() (bool, string) {
		code, body := readyz(t, h)
		reason, _ := body["reason"].(string)
		return code == http.StatusServiceUnavailable && strings.Contains(reason, "refuse this edge's credential"), reason
	})
	if _, body := readyz(t, h); !strings.Contains(body["reason"].(string), "coordinator_token") {
		t.Fatalf("the readiness reason does not name the setting to fix: %v", body["reason"])
	}
	start := metric(t, reg, "muster_edge_coordinator_credential_refusals_total")
	callsAtStart := calls.Load()
	// A stretch of the edge's loops: 150 calls, 1.5 s unloaded, with tries spaced up to 300ms
	// for about 20 refusals over the three loops; without backoff each call is one.
	testkit.WaitFor(t, 60*time.Second, "150 calls of the edge's loops", func() bool { return calls.Load()-callsAtStart >= 150 })
	refusals := metric(t, reg, "muster_edge_coordinator_credential_refusals_total") - start
	if refusals < 1 || refusals > 50 {
		t.Fatalf("over 150 calls of its loops the coordinators refused the edge %v times: want the tries spaced (1..50)", refusals)
	}
	if got := metric(t, reg, "muster_edge_coordinator_credential_refused"); got != 1 {
		t.Fatalf("muster_edge_coordinator_credential_refused = %v while refused", got)
	}
	if n := strings.Count(logs.String(), "level=ERROR"); n != 1 || !logs.Contains("coordinator_token") {
		t.Fatalf("%d ERROR lines (want one naming coordinator_token):\n%s", n, logs.Tail(20))
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 0 {
		t.Fatalf("%d WARN lines beside the refusal:\n%s", n, logs.Tail(20))
	}

	m.bind(t, wrongToken) // the coordinators' credential rotated to the edge's
	testkit.WaitFor(t, 30*time.Second, "the edge to be ready again by itself", func() (bool, string) {
		code, body := readyz(t, h)
		reason, _ := body["reason"].(string)
		return code == http.StatusOK, reason
	})
	if got := metric(t, reg, "muster_edge_coordinator_credential_refused"); got != 0 {
		t.Fatalf("muster_edge_coordinator_credential_refused = %v once accepted", got)
	}
	if !logs.Contains("accept this edge's credential again") {
		t.Fatalf("no line saying the credential is accepted again:\n%s", logs.Tail(20))
	}
}
