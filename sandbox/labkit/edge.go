// SPDX-License-Identifier: Apache-2.0

package labkit

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/choria-io/go-choria/backoff"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/app"
	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/pkg/testkit"
)

// Edge is one in-process edge, built by edge/app exactly as muster-edge builds it, that records
// every final result.
type Edge struct {
	// Name names the edge in failure messages.
	Name string
	App  *app.App
	Logs *testkit.LogBuffer

	mu       sync.Mutex
	results  map[string][]hostflow.Result
	finished int // nodes with a provisioned or gone result

	stop     context.CancelFunc
	done     chan error
	stopOnce sync.Once
}

// EdgeOptions are the application options the suites run an edge with, tune applied last to
// the edge's own options. Nodes that never answer would hold a flow for 5 tries of go-choria's
// 22 s windows, hence 4 s replies; an unanswered restart is confirmed after 3 s.
func EdgeOptions(tune func(*edge.Options)) app.Options {
	return app.Options{
		RPCTimeout:  4 * time.Second,
		RetryPolicy: backoff.Policy{Millis: []int{50, 100, 200}},
		Tune: func(o *edge.Options) {
			o.ConfirmAfter = 3 * time.Second
			if tune != nil {
				tune(o)
			}
		},
	}
}

// StartEdge builds the edge of cfg with o (its Logger and OnResult are the Edge's, logging from
// level) and runs it until the test ends, when the last tail bytes of its log are shown if the
// test failed.
func StartEdge(t testing.TB, name string, cfg *config.Config, o app.Options, level slog.Level, tail int) *Edge {
	t.Helper()
	e := &Edge{Name: name, Logs: &testkit.LogBuffer{}, results: map[string][]hostflow.Result{}, done: make(chan error, 1)}
	o.Logger, o.OnResult = e.Logs.Logger(level), e.record
	var err error
	if e.App, err = app.Build(context.Background(), cfg, o); err != nil {
		t.Fatalf("build edge %s: %v", name, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.stop = cancel
	go func() { e.done <- e.App.Run(ctx) }()
	t.Cleanup(func() {
		e.Shutdown(t)
		if t.Failed() {
			t.Logf("edge %s log (tail):\n%s", name, e.Logs.Tail(tail))
		}
	})
	return e
}

func (e *Edge) record(r hostflow.Result) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if finishes(r.Outcome) && !slices.ContainsFunc(e.results[r.Identity], func(old hostflow.Result) bool { return finishes(old.Outcome) }) {
		e.finished++
	}
	e.results[r.Identity] = append(e.results[r.Identity], r)
}

// finishes is an outcome that ends a node's provisioning: provisioned, or gone (its restart went
// out under a lease lost meanwhile; the lab's log says it was provisioned).
func finishes(o hostflow.Outcome) bool { return o == hostflow.Provisioned || o == hostflow.Gone }

// Finished counts the nodes with a provisioned or gone result, each once however many results
// it has (a node provisioned under a lease lost before its report is read gone under the next).
func (e *Edge) Finished() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.finished
}

// FlowTimes is how long each host flow that provisioned a node took.
func (e *Edge) FlowTimes() []time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []time.Duration
	for _, rs := range e.results {
		for _, r := range rs {
			if r.Outcome == hostflow.Provisioned {
				out = append(out, r.Took)
			}
		}
	}
	return out
}

// Shutdown stops the edge and waits for Run to return; it is safe to call twice.
func (e *Edge) Shutdown(t testing.TB) {
	e.stopOnce.Do(func() {
		e.stop()
		select {
		case err := <-e.done:
			if err != nil {
				t.Errorf("edge %s run: %v", e.Name, err)
			}
		case <-time.After(60 * time.Second):
			t.Errorf("edge %s did not stop within 60s of its context ending", e.Name)
		}
		e.App.Close()
	})
}

// ResultsOf is a copy of every final result seen for identity.
func (e *Edge) ResultsOf(identity string) []hostflow.Result {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]hostflow.Result(nil), e.results[identity]...)
}

// Has reports whether identity has a final result with outcome o.
func (e *Edge) Has(identity string, o hostflow.Outcome) bool {
	for _, r := range e.ResultsOf(identity) {
		if r.Outcome == o {
			return true
		}
	}
	return false
}

// Touched lists the nodes the edge has a result for.
func (e *Edge) Touched() map[string]bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[string]bool{}
	for id := range e.results {
		out[id] = true
	}
	return out
}

// PausedGauge reads the edge's choria_provisioner_paused.
func (e *Edge) PausedGauge(t testing.TB) float64 {
	t.Helper()
	families, err := e.App.Metrics.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "choria_provisioner_paused" && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatal("no choria_provisioner_paused")
	return 0
}
