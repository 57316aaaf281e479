// SPDX-License-Identifier: Apache-2.0

package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/httpapi"
	"github.com/seed96588659/muster/coordinator/internal/testcluster"
	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/coordinator/lessor"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

const (
	edgeToken  = "edge-token-for-httpapi-tests"
	adminToken = "admin-token-for-httpapi-tests"
	maxBody    = 4096
)

// member is one member of a testcluster.Cluster under the names these tests use: url its API's
// address, svc its service, srv the server of its API, logs the cluster's log lines.
type member struct {
	id   string
	svc  *coordinator.Service
	srv  *httptest.Server
	url  string
	logs *testkit.LogBuffer
	reg  *prometheus.Registry
}

// cluster starts n members behind their real HTTP APIs; c1 bootstraps and leads throughout, the
// others join through its admin API.
func cluster(t testing.TB, n int) []*member {
	t.Helper()
	return clusterWith(t, n, nil)
}

// clusterWith is cluster with edit applied to every member's HTTP configuration.
func clusterWith(t testing.TB, n int, edit func(*httpapi.Config)) []*member {
	t.Helper()
	c := testcluster.New(t, n, testcluster.WithAPI(func(cfg *httpapi.Config) {
		cfg.EdgeTokens, cfg.AdminTokens, cfg.MaxBodyBytes = []string{edgeToken}, []string{adminToken}, maxBody
		if edit != nil {
			edit(cfg)
		}
	}))
	// The system clock, the default lease policy, every log line, and no election on a stall
	// of a loaded machine: these tests kill no member and take c1 as the leader throughout.
	c.Clock = nil
	c.Leases = lessor.DefaultConfig()
	c.Leases.TTL = 30 * time.Second
	c.Timeouts = testcluster.StableTimeouts()
	c.Logs, c.LogLevel = &testkit.LogBuffer{}, slog.LevelDebug
	c.StartAll()
	var ms []*member
	for _, m := range c.Members {
		ms = append(ms, &member{id: m.ID, svc: m.Svc, srv: m.API, url: m.URL, logs: c.Logs, reg: m.Reg})
	}
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
