// SPDX-License-Identifier: Apache-2.0

package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/httpapi"
	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/coordinator/lessor"
	"github.com/seed96588659/muster/coordinator/raftnode"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

const (
	edgeToken  = "edge-token-for-httpapi-tests"
	adminToken = "admin-token-for-httpapi-tests"
	maxBody    = 4096
)

// member is a real coordinator (Raft over TCP on 127.0.0.1, bbolt in t.TempDir) behind a real
// HTTP server running the API.
type member struct {
	id   string
	svc  *coordinator.Service
	srv  *httptest.Server
	url  string
	logs *testkit.LogBuffer
	reg  *prometheus.Registry
}

// startMember starts one member; edit may change the HTTP layer's configuration.
func startMember(t testing.TB, dir, id string, bootstrap bool, edit func(*httpapi.Config)) *member {
	t.Helper()
	m := &member{id: id, logs: &testkit.LogBuffer{}, reg: prometheus.NewRegistry()}
	m.srv = httptest.NewUnstartedServer(nil)
	m.url = "http://" + m.srv.Listener.Addr().String()
	logger := slog.New(slog.NewTextHandler(m.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	lc := lessor.DefaultConfig()
	lc.TTL = 30 * time.Second
	svc, err := coordinator.New(coordinator.Config{
		ID: id, DataDir: filepath.Join(dir, id), RaftBind: "127.0.0.1:0", APIAddress: m.url,
		Bootstrap: bootstrap, Leases: lc, Logger: logger, Registry: m.reg, Timeouts: stableTimeouts(),
	})
	if err != nil {
		t.Fatal(err)
	}
	m.svc = svc
	cfg := httpapi.Config{
		EdgeTokens: []string{edgeToken}, AdminTokens: []string{adminToken}, MaxBodyBytes: maxBody,
		Self: m.url, Errors: coordinator.HTTPErrors(), Logger: logger, Registry: m.reg,
	}
	if edit != nil {
		edit(&cfg)
	}
	h, err := httpapi.New(svc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	m.srv.Config.Handler = h
	m.srv.Start()
	t.Cleanup(func() {
		m.srv.Close()
		if err := svc.Close(); err != nil {
			t.Logf("close %s: %v", id, err)
		}
	})
	return m
}

// stableTimeouts are slower than raftnode.LoopbackTimeouts: these tests kill no member and take
// c1 as the leader throughout, so an election caused by a stall of a loaded machine (-race, two
// shared cores) would only break them.
func stableTimeouts() raftnode.Timeouts {
	return raftnode.Timeouts{Heartbeat: 2 * time.Second, Election: 2 * time.Second, LeaderLease: 2 * time.Second, Commit: 10 * time.Millisecond}
}

// cluster starts n members; the first bootstraps and the others join through the admin API.
func cluster(t testing.TB, n int) []*member {
	t.Helper()
	return clusterWith(t, n, nil)
}

// clusterWith is cluster with edit applied to every member's HTTP configuration.
func clusterWith(t testing.TB, n int, edit func(*httpapi.Config)) []*member {
	t.Helper()
	dir := t.TempDir()
	ms := []*member{startMember(t, dir, "c1", true, edit)}
	testkit.WaitFor(t, 30*time.Second, "c1 to lead", ms[0].svc.IsLeader)
	admin := adminClient(t, ms[0].url)
	for i := 2; i <= n; i++ {
		m := startMember(t, dir, fmt.Sprintf("c%d", i), false, edit)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := admin.Join(ctx, api.JoinRequest{ID: m.id, RaftAddress: m.svc.RaftAddress(), APIAddress: m.url})
		cancel()
		if err != nil {
			t.Fatalf("join %s: %v", m.id, err)
		}
		ms = append(ms, m)
	}
	// Every member knows the leader's API address once the member table has replicated.
	testkit.WaitFor(t, 30*time.Second, "every member to name the leader", func() bool {
		for _, m := range ms {
			if m.svc.LeaderAPIAddress() != ms[0].url {
				return false
			}
		}
		return true
	})
	return ms
}

func edgeClient(t testing.TB, urls ...string) *api.Client { return tokenClient(t, edgeToken, urls) }

func adminClient(t testing.TB, urls ...string) *api.Client { return tokenClient(t, adminToken, urls) }

func tokenClient(t testing.TB, token string, urls []string) *api.Client {
	t.Helper()
	c, err := api.NewClient(urls, api.WithToken(token), api.WithRetryDelay(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// post sends body as is, for requests no well-behaved client would send.
func post(t *testing.T, url, path, token, body string) (int, api.ErrorBody, http.Header) {
	t.Helper()
	return do(t, http.MethodPost, url+path, token, body)
}

func do(t *testing.T, method, url, token, body string) (int, api.ErrorBody, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var eb api.ErrorBody
	raw := new(bytes.Buffer)
	_, _ = raw.ReadFrom(resp.Body)
	_ = json.Unmarshal(raw.Bytes(), &eb)
	return resp.StatusCode, eb, resp.Header
}

// ledgerAll selects every node of the ledger.
func ledgerAll() ledger.NodeFilter { return ledger.NodeFilter{Limit: 1 << 30} }

// counter reads one counter of a member's registry; labels must match exactly.
func counter(t *testing.T, m *member, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metric:
		for _, mt := range f.GetMetric() {
			if len(mt.GetLabel()) != len(labels) {
				continue
			}
			for _, l := range mt.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue metric
				}
			}
			return mt.GetCounter().GetValue()
		}
	}
	return 0
}
