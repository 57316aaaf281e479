// SPDX-License-Identifier: Apache-2.0

package lease_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/edge/register"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// recordingCoordinator keeps the register and report requests it receives and answers them as a
// coordinator that refused nothing would.
type recordingCoordinator struct {
	mu        sync.Mutex
	registers []api.RegisterRequest
	reports   []api.ReportRequest
}

func (f *recordingCoordinator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case api.PathRegister:
		var req api.RegisterRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		f.registers = append(f.registers, req)
		_ = json.NewEncoder(w).Encode(api.RegisterResponse{Added: len(req.Nodes)})
	case api.PathReport:
		var req api.ReportRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		f.reports = append(f.reports, req)
		resp := api.ReportResponse{Applied: []string{}}
		for _, res := range req.Results {
			resp.Applied = append(resp.Applied, res.Identity)
		}
		_ = json.NewEncoder(w).Encode(resp)
	default:
		http.NotFound(w, r)
	}
}

// TestCoordinator_SendsNothingTheAPIRefuses: an identity discovery found that the API does not
// take is not registered, a version too long for it is dropped and an error too long is cut
// before the report leaves, each with a log line naming the node; the rest goes as it was.
func TestCoordinator_SendsNothingTheAPIRefuses(t *testing.T) {
	f := &recordingCoordinator{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	client, err := api.NewClient([]string{srv.URL}, api.WithAttempts(1))
	if err != nil {
		t.Fatal(err)
	}
	logs := &testkit.LogBuffer{}
	o := lease.DefaultCoordinatorOptions()
	o.Client, o.Edge, o.Region, o.Logger = client, "edge-eu-1", "eu", slog.New(slog.NewTextHandler(logs, nil))
	src, err := lease.NewCoordinator(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	long := strings.Repeat("x", api.MaxNameLength+1)
	if _, err := src.Register(ctx, []register.Found{{Identity: "a"}, {Identity: "bad one"}, {Identity: "b/2"}, {Identity: long}, {Identity: "c"}}); err != nil {
		t.Fatal(err)
	}
	l := api.Lease{ID: "l-1", Edge: "edge-eu-1", Region: "eu", Nodes: []string{"n1", "n2"}, Token: 4}
	results := []api.NodeResult{
		{Identity: "n1", Outcome: api.OutcomeProvisioned, Version: strings.Repeat("9", 5000)},
		{Identity: "n2", Outcome: api.OutcomeFailed, Error: strings.Repeat("é", api.MaxErrorLength)},
	}
	if _, err := src.Report(ctx, l, results); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.registers) != 1 || len(f.registers[0].Nodes) != 2 || f.registers[0].Nodes[0].Identity != "a" || f.registers[0].Nodes[1].Identity != "c" {
		t.Fatalf("registered %+v, want only a and c", f.registers)
	}
	if len(f.reports) != 1 {
		t.Fatalf("%d reports sent", len(f.reports))
	}
	rep := f.reports[0]
	if _, rejected := rep.SplitResults(); len(rejected) != 0 || rep.Results[0].Version != "" || !strings.HasPrefix(rep.Results[1].Error, "éé") {
		t.Fatalf("report sent %d results, refused by the API: %+v", len(rep.Results), rejected)
	}
	for _, want := range []string{"bad one", "b/2", "n1", "n2", "version dropped", "cut"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log does not name %q: %s", want, logs.String())
		}
	}
}
