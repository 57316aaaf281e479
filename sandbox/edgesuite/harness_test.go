// SPDX-License-Identifier: Apache-2.0

package edgesuite

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/choria-io/go-choria/backoff"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/app"
	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/audit"
	"github.com/seed96588659/muster/sandbox/fleet/faults"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/internal/gobuild"
	"github.com/seed96588659/muster/sandbox/internal/labkit"
	"github.com/seed96588659/muster/sandbox/stack/edgefile"
)

const region = "eu"

// Binaries built once for the package: the real node's muster-sandbox, muster-edge and the
// sample helper the lab's edge configuration runs.
var bins struct {
	node   string
	edge   string
	helper string
}

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "muster-edgesuite-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	if bins.node, err = lab.BuildNodeBinary(ctx, dir); err != nil {
		fmt.Fprintln(os.Stderr, "build node binary:", err)
		return 1
	}
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	bins.edge = filepath.Join(dir, "muster-edge")
	bins.helper = filepath.Join(dir, edgefile.SampleHelper)
	if err := gobuild.Build(ctx, filepath.Join(wd, "..", "..", "edge"), "-o", dir+"/", "./cmd/muster-edge", "./cmd/muster-helper-sample"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// startLab starts a one-region lab for one test and stops it at the end.
func startLab(t *testing.T, o lab.Options) *lab.Lab {
	t.Helper()
	o.Dir = filepath.Join(t.TempDir(), "lab")
	o.Regions = []string{region}
	// The node binary is also what the lab publishes as the upgrade release, which emulated
	// nodes fetch on release_update.
	o.NodeBinary = bins.node
	l, err := lab.Start(context.Background(), o)
	if err != nil {
		t.Fatalf("start lab: %v", err)
	}
	t.Cleanup(func() { l.Stop() })
	if failed := l.Region(region).Failed(); len(failed) > 0 {
		t.Fatalf("lab nodes failed to start: %v", failed)
	}
	return l
}

// runningEdge is one in-process standalone edge, built by edge/app exactly as muster-edge is.
type runningEdge struct {
	app  *app.App
	logs *testkit.LogBuffer

	mu      sync.Mutex
	results map[string][]hostflow.Result

	stop     context.CancelFunc
	done     chan error
	stopOnce sync.Once
}

// startEdge builds an edge from the lab region's edge configuration, adjusted by tune, and runs it
// until the test ends.
func startEdge(t *testing.T, l *lab.Lab, tune func(*config.Config), tuneEdge func(*edge.Options), opts ...func(*app.Options)) *runningEdge {
	t.Helper()
	cfg := labkit.EdgeConfig(t, l, region, bins.helper)
	cfg.Interval = 3 * time.Second
	cfg.LogLevel = "debug"
	if tune != nil {
		tune(cfg)
	}
	re := &runningEdge{logs: &testkit.LogBuffer{}, results: map[string][]hostflow.Result{}, done: make(chan error, 1)}
	log := slog.New(slog.NewTextHandler(re.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ao := app.Options{
		Logger:   log,
		OnResult: re.record,
		// Nodes that never answer would hold a flow for 5 tries of go-choria's 22 s windows.
		RPCTimeout:  4 * time.Second,
		RetryPolicy: backoff.Policy{Millis: []int{50, 100, 200}},
		Tune: func(o *edge.Options) {
			o.ConfirmAfter = 3 * time.Second
			if tuneEdge != nil {
				tuneEdge(o)
			}
		},
	}
	for _, o := range opts {
		o(&ao)
	}
	var err error
	re.app, err = app.Build(context.Background(), cfg, ao)
	if err != nil {
		t.Fatalf("build edge: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	re.stop = cancel
	go func() { re.done <- re.app.Run(ctx) }()
	t.Cleanup(func() {
		re.shutdown(t)
		if t.Failed() {
			t.Logf("edge log (last 8 KiB):\n%s", re.logs.Tail(8<<10))
		}
	})
	return re
}

// withRealTimeouts keeps go-choria's reply windows: a real release_update may take 20 s.
func withRealTimeouts(o *app.Options) { o.RPCTimeout = 0 }

func (re *runningEdge) record(r hostflow.Result) {
	re.mu.Lock()
	re.results[r.Identity] = append(re.results[r.Identity], r)
	re.mu.Unlock()
}

// shutdown stops the edge and waits for Run to return; it is safe to call twice.
func (re *runningEdge) shutdown(t *testing.T) {
	re.stopOnce.Do(func() {
		re.stop()
		select {
		case err := <-re.done:
			if err != nil {
				t.Errorf("edge run: %v", err)
			}
		case <-time.After(60 * time.Second):
			t.Errorf("edge did not stop within 60s of its context ending")
		}
		re.app.Close()
	})
}

// resultsOf is a copy of every final result seen for identity.
func (re *runningEdge) resultsOf(identity string) []hostflow.Result {
	re.mu.Lock()
	defer re.mu.Unlock()
	return append([]hostflow.Result(nil), re.results[identity]...)
}

// has reports whether identity has a final result with outcome o.
func (re *runningEdge) has(identity string, o hostflow.Outcome) bool {
	for _, r := range re.resultsOf(identity) {
		if r.Outcome == o {
			return true
		}
	}
	return false
}

// acceptedCount is how often identity accepted action (OK replies) in the lab's log.
func acceptedCount(r audit.Report, identity, action string) int {
	n := r.Nodes[identity]
	if n == nil || n.Actions[action] == nil {
		return 0
	}
	return n.Actions[action].OK
}

// assertNoDoubleProvisioning fails the test with the report's evidence when any node accepted
// changes from two callers within one episode.
func assertNoDoubleProvisioning(t *testing.T, r audit.Report) {
	t.Helper()
	if len(r.DoubleProvisioned) > 0 {
		t.Fatalf("double provisioned: %+v", r.DoubleProvisioned)
	}
}

func emu(i int) string { return fmt.Sprintf("%s%05d", lab.EmulatedPrefix(region), i) }

func rule(id string, f faults.Fault) faults.Rule {
	return faults.Rule{Select: faults.Selector{Identity: id}, Fault: f}
}
