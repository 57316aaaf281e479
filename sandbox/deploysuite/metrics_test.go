// SPDX-License-Identifier: Apache-2.0

package deploysuite

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/choria-io/go-choria/backoff"

	"github.com/seed96588659/muster/edge/app"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/loopback"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/faults"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/stack/edgefile"
)

const (
	region     = "eu"
	edgeToken  = "deploysuite-edge-token-0123"
	adminToken = "deploysuite-admin-token-0123"
)

// metricName finds the names of Muster's and choria-provisioner's metrics in PromQL.
var metricName = regexp.MustCompile(`\b(?:choria_provisioner|muster)_[a-z0-9_]+\b`)

// TestDashboardAndRules_NameOnlyExportedMetrics: every metric the Grafana dashboard and the alert
// rules query is exported by a running edge (standalone against a lab, after provisioning,
// shutting down and failing nodes) or a running coordinator (after grants, reports and an
// abandoned node); and docs/metrics.md documents exactly the metrics the code declares.
func TestDashboardAndRules_NameOnlyExportedMetrics(t *testing.T) {
	var wg sync.WaitGroup
	var edgeText, coordText string
	wg.Go(func() { edgeText = scrapeEdge(t) })
	wg.Go(func() { coordText = scrapeCoordinator(t) })
	wg.Wait()
	if t.Failed() {
		return
	}
	exported := map[string]bool{}
	for _, text := range []string{edgeText, coordText} {
		for n := range exposedNames(text) {
			exported[n] = true
		}
	}

	used := map[string][]string{}
	for _, q := range dashboardQueries(t) {
		for _, n := range metricName.FindAllString(q, -1) {
			used[n] = append(used[n], "deploy/grafana/muster.json")
		}
	}
	for _, q := range ruleQueries(t) {
		for _, n := range metricName.FindAllString(q, -1) {
			used[n] = append(used[n], "deploy/prometheus/muster-rules.yaml")
		}
	}
	if len(used) < 20 {
		t.Fatalf("the dashboard and rules name only %d metrics: %v", len(used), slices.Sorted(maps.Keys(used)))
	}
	for n, where := range used {
		if !exported[n] {
			t.Errorf("%s (queried in %s) is not exported by a running edge or coordinator", n, slices.Compact(where))
		}
	}

	// docs/metrics.md against the code's declarations and the processes' exposition.
	declared := declaredMetrics(t)
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `((?:choria_provisioner|muster)_[a-z0-9_]+)`").FindAllStringSubmatch(string(readRepo(t, "docs/metrics.md")), -1) {
		documented[m[1]] = true
	}
	for n := range declared {
		if !documented[n] {
			t.Errorf("docs/metrics.md does not document %s", n)
		}
	}
	for n := range documented {
		if !declared[n] {
			t.Errorf("docs/metrics.md documents %s, which the code does not declare", n)
		}
	}
	for n := range exposedFamilies(edgeText + coordText) {
		if !documented[n] {
			t.Errorf("%s is exported but not in docs/metrics.md", n)
		}
	}
}

// declaredMetrics are the metric names written as string literals in the non-test Go files of
// pkg, edge and coordinator.
func declaredMetrics(t *testing.T) map[string]bool {
	t.Helper()
	re := regexp.MustCompile(`"((?:choria_provisioner|muster)_[a-z0-9_]+)"`)
	out := map[string]bool{}
	for _, mod := range []string{"pkg", "edge", "coordinator"} {
		err := filepath.WalkDir(filepath.Join(root, mod), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			b, err := os.ReadFile(p)
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				out[m[1]] = true
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// exposedFamilies are the metric families (# TYPE lines) of an exposition.
func exposedFamilies(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^# TYPE ((?:choria_provisioner|muster)_[a-z0-9_]+) `).FindAllStringSubmatch(text, -1) {
		out[m[1]] = true
	}
	return out
}

// exposedNames are the families and the sample names (with _sum, _count, _bucket) that carry at
// least one sample: a vector with no label values yet has no samples and does not count.
func exposedNames(text string) map[string]bool {
	out := map[string]bool{}
	types := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if f := strings.Fields(line); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			types[f[2]] = f[3]
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name := line[:strings.IndexAny(line, "{ ")]
		out[name] = true
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && (types[base] == "histogram" || types[base] == "summary") {
				out[base] = true
			}
		}
	}
	return out
}

func dashboardQueries(t *testing.T) []string {
	var d struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(readRepo(t, "deploy/grafana/muster.json"), &d); err != nil {
		t.Fatalf("deploy/grafana/muster.json: %v", err)
	}
	var out []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	for _, v := range d.Templating.List {
		out = append(out, v.Definition)
	}
	return out
}

func ruleQueries(t *testing.T) []string {
	var out []string
	for _, d := range yamlDocs(t, "deploy/prometheus/muster-rules.yaml") {
		for _, g := range list(d["groups"]) {
			for _, r := range list(path(g, "rules")) {
				out = append(out, str(path(r, "expr")))
			}
		}
	}
	return out
}

// scrapeEdge runs a standalone edge (edge/app, as muster-edge builds it) against a lab of 8
// emulated nodes (one whose configure always fails, one the helper shuts down) and returns its
// /metrics once every node has its outcome.
func scrapeEdge(t *testing.T) string {
	failing, shutdown := lab.EmulatedPrefix(region)+"00000", lab.EmulatedPrefix(region)+"00001"
	l, err := lab.Start(context.Background(), lab.Options{
		Dir: filepath.Join(t.TempDir(), "lab"), Regions: []string{region}, Emulated: 8, ReleaseCache: "off",
		Faults: faults.NewSet(faults.Rule{Select: faults.Selector{Identity: failing},
			Fault: faults.Fault{Fails: []faults.Fail{{Action: "choria_provision#configure", Times: 1 << 30, Message: "disk full"}}}}),
	})
	if err != nil {
		t.Errorf("start lab: %v", err)
		return ""
	}
	t.Cleanup(func() { l.Stop() })
	file, err := edgefile.Write(l, region, bins.helper)
	if err != nil {
		t.Errorf("edge configuration: %v", err)
		return ""
	}
	cfg, _, err := loadEdge(t, file, nil)
	if err != nil {
		t.Errorf("load %s: %v", file, err)
		return ""
	}
	cfg.Helper += " --shutdown '^" + shutdown + "$'"
	cfg.Interval = 3 * time.Second
	cfg.MonitorPort = freePort(t)
	logs := &testkit.LogBuffer{}
	a, err := app.Build(context.Background(), cfg, app.Options{
		Logger:      slog.New(slog.NewTextHandler(logs, nil)),
		RPCTimeout:  4 * time.Second,
		RetryPolicy: backoff.Policy{Millis: []int{50, 100, 200}},
	})
	if err != nil {
		t.Errorf("build edge: %v", err)
		return ""
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Errorf("edge did not stop within 60s")
		}
		a.Close()
		if t.Failed() {
			t.Logf("edge log:\n%s", logs.String())
		}
	})
	url := fmt.Sprintf("http://%s/metrics", a.MonitorAddr())
	var text string
	ok, _ := testkit.Poll(2*time.Minute, func() bool {
		text = get(url)
		return strings.Contains(text, `choria_provisioner_provisioned{site="eu"} 6`) &&
			strings.Contains(text, `choria_provisioner_helper_shutdown_requests{site="eu"} 1`) &&
			strings.Contains(text, `choria_provisioner_rpc_errors{rpc="choria_provision#configure",site="eu"}`)
	})
	if !ok {
		t.Errorf("the edge never provisioned 6 nodes, shut one down and failed one; /metrics:\n%s", text)
	}
	return text
}

// scrapeCoordinator runs a one-member muster-coordinator process, registers nodes, takes a lease,
// reports a provisioned, a failed (abandoned after one attempt) and a held node and a stale
// result, and returns its /metrics.
func scrapeCoordinator(t *testing.T) string {
	dir := t.TempDir()
	base := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	logPath := filepath.Join(dir, "coordinator.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Error(err)
		return ""
	}
	cmd := exec.Command(bins.coordinator, "serve", "--node-id", "c1", "--data-dir", filepath.Join(dir, "c1"), "--bootstrap",
		"--raft-bind", fmt.Sprintf("127.0.0.1:%d", freePort(t)), "--http-bind", strings.TrimPrefix(base, "http://"),
		"--lease-max-attempts", "1", "--lease-retry-backoff", "0s")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), "MUSTER_AUTH_EDGE_TOKENS="+edgeToken, "MUSTER_AUTH_ADMIN_TOKEN="+adminToken)
	// Dies with the test binary: a panic elsewhere runs no cleanup (three leaked members seen).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Error(err)
		return ""
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("coordinator log:\n%s", b)
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, _ := api.NewClient([]string{base}, api.WithToken(adminToken))
	if ok, _ := testkit.Poll(time.Minute, func() bool {
		st, err := admin.Status(ctx)
		return err == nil && st.LeaderID == "c1"
	}); !ok {
		t.Error("the coordinator never led")
		return ""
	}
	c, err := api.NewClient([]string{base}, api.WithToken(edgeToken))
	if err != nil {
		t.Error(err)
		return ""
	}
	nodes := []api.RegisterNode{{Identity: "n1"}, {Identity: "n2"}, {Identity: "n3"}}
	if _, err := c.Register(ctx, api.RegisterRequest{Region: region, Edge: "e1", Nodes: nodes}); err != nil {
		t.Errorf("register: %v", err)
		return ""
	}
	acq, err := c.Acquire(ctx, api.AcquireRequest{Edge: "e1", Region: region, MaxNodes: 3})
	if err != nil || acq.Lease == nil {
		t.Errorf("acquire: %v %+v", err, acq)
		return ""
	}
	ls := acq.Lease
	if _, err := c.Renew(ctx, api.RenewRequest{LeaseID: ls.ID, Token: ls.Token, Edge: "e1", Region: region}); err != nil {
		t.Errorf("renew: %v", err)
	}
	rep, err := c.Report(ctx, api.ReportRequest{LeaseID: ls.ID, Token: ls.Token, Edge: "e1", Region: region, Results: []api.NodeResult{
		{Identity: "n1", Outcome: api.OutcomeProvisioned}, {Identity: "n2", Outcome: api.OutcomeFailed, Error: "disk full"},
		// A second responder holds n3 for approval (the held queue's gauge).
		{Identity: "n3", Outcome: api.OutcomeFailed, Error: api.DuplicateResponderPrefix + " a second responder answered jwt for n3"},
	}})
	if err != nil || len(rep.Applied) != 3 {
		t.Errorf("report: %v %+v", err, rep)
	}
	// The same lease's token again, for a node already finished under it: stale.
	_, _ = c.Report(ctx, api.ReportRequest{LeaseID: ls.ID, Token: ls.Token, Edge: "e1", Region: region, Results: []api.NodeResult{
		{Identity: "n1", Outcome: api.OutcomeProvisioned},
	}})
	var text string
	if ok, _ := testkit.Poll(30*time.Second, func() bool {
		text = get(base + "/metrics")
		return strings.Contains(text, `muster_coordinator_ledger_nodes{member="c1",region="eu",state="abandoned"} 1`) &&
			strings.Contains(text, `muster_coordinator_results_applied_total{member="c1",outcome="provisioned"} 1`) &&
			strings.Contains(text, `muster_coordinator_http_requests_total{member="c1",`) &&
			strings.Contains(text, `muster_coordinator_ledger_held_oldest_seconds{member="c1",region="eu"}`)
	}); !ok {
		t.Errorf("the coordinator's /metrics never showed the abandoned and the provisioned node:\n%s", text)
	}
	return text
}

// get returns a URL's body, "" on any error.
func get(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// freePort is a loopback port nothing listens on right now; 0 (and a test error) if none is
// free. It reports with Error, not Fatal: the scrapes call it from their own goroutines.
func freePort(t *testing.T) int {
	p, err := loopback.Port()
	if err != nil {
		t.Errorf("free port: %v", err)
	}
	return p
}
