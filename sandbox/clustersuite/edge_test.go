// SPDX-License-Identifier: Apache-2.0

package clustersuite

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
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
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/internal/labkit"
)

// startLab starts a lab of emulated nodes in regions for one test.
func startLab(t testing.TB, o lab.Options) *lab.Lab {
	t.Helper()
	o.Dir = filepath.Join(t.TempDir(), "lab")
	o.ReleaseCache = "off"
	l, err := lab.Start(context.Background(), o)
	if err != nil {
		t.Fatalf("start lab: %v", err)
	}
	t.Cleanup(func() { _ = l.Stop() })
	return l
}

// runningEdge is one in-process edge built by edge/app, in cluster mode unless standalone.
type runningEdge struct {
	name string
	app  *app.App
	logs *testkit.LogBuffer
	cut  *cutDialer

	mu      sync.Mutex
	results map[string][]hostflow.Result

	stop     context.CancelFunc
	done     chan error
	stopOnce sync.Once
}

type edgeSpec struct {
	region string
	n      int // lab client identity and credential number
	// standalone runs without coordinators (the benchmark's baseline).
	standalone bool
	tune       func(*config.Config)
	tuneEdge   func(*edge.Options)
}

// startEdge builds and runs the edge of spec against l until the test ends.
func startEdge(t testing.TB, l *lab.Lab, spec edgeSpec) *runningEdge {
	t.Helper()
	cfg := labkit.EdgeConfig(t, l, spec.region, suite.helper)
	client := l.Region(spec.region).Clients()[spec.n-1]
	cfg.ChoriaConfig, cfg.ChoriaIdentity, cfg.EdgeName = client.Config, client.Identity, client.Identity
	// One journal per edge (the generated file's is one per region); a restarted edge finds its own.
	cfg.StateDir = filepath.Join(filepath.Dir(l.InfoFile()), "edge-state", client.Identity)
	cfg.Interval = 2 * time.Second
	cfg.Workers = 16
	cfg.BatchSize = 8
	if !spec.standalone {
		cfg.Coordinators = suite.cluster.urls()
		cfg.CoordinatorToken = edgeToken(spec.region, spec.n)
	}
	if spec.tune != nil {
		spec.tune(cfg)
	}
	re := &runningEdge{name: client.Identity, logs: &testkit.LogBuffer{}, results: map[string][]hostflow.Result{}, done: make(chan error, 1), cut: &cutDialer{}}
	log := slog.New(slog.NewTextHandler(re.logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ao := app.Options{
		Logger:      log,
		OnResult:    re.record,
		RPCTimeout:  4 * time.Second,
		RetryPolicy: backoff.Policy{Millis: []int{50, 100, 200}},
		// Every call to the coordinators goes through a dialer the test can cut: a partition
		// between this edge and all of them.
		CoordinatorHTTP: &http.Client{Transport: &http.Transport{DialContext: re.cut.DialContext, MaxIdleConnsPerHost: 16}},
		Tune: func(o *edge.Options) {
			o.ConfirmAfter = 3 * time.Second
			if spec.tuneEdge != nil {
				spec.tuneEdge(o)
			}
		},
	}
	var err error
	re.app, err = app.Build(context.Background(), cfg, ao)
	if err != nil {
		t.Fatalf("build edge %s: %v", re.name, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	re.stop = cancel
	go func() { re.done <- re.app.Run(ctx) }()
	t.Cleanup(func() {
		re.shutdown(t)
		if t.Failed() {
			t.Logf("edge %s log (tail):\n%s", re.name, re.logs.Tail(6<<10))
		}
	})
	return re
}

func (re *runningEdge) record(r hostflow.Result) {
	re.mu.Lock()
	re.results[r.Identity] = append(re.results[r.Identity], r)
	re.mu.Unlock()
}

func (re *runningEdge) resultsOf(id string) []hostflow.Result {
	re.mu.Lock()
	defer re.mu.Unlock()
	return append([]hostflow.Result(nil), re.results[id]...)
}

// touched lists the nodes this edge has a result for.
func (re *runningEdge) touched() map[string]bool {
	re.mu.Lock()
	defer re.mu.Unlock()
	out := map[string]bool{}
	for id := range re.results {
		out[id] = true
	}
	return out
}

func (re *runningEdge) shutdown(t testing.TB) {
	re.stopOnce.Do(func() {
		re.stop()
		select {
		case err := <-re.done:
			if err != nil {
				t.Errorf("edge %s run: %v", re.name, err)
			}
		case <-time.After(60 * time.Second):
			t.Errorf("edge %s did not stop within 60s", re.name)
		}
		re.app.Close()
	})
}

// cutDialer dials normally until Cut, which closes every connection it made and refuses new
// ones until Heal: the edge is partitioned from every coordinator.
type cutDialer struct {
	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]bool
}

var errCut = errors.New("network cut by the test")

func (d *cutDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	cut := d.cut
	d.mu.Unlock()
	if cut {
		return nil, errCut
	}
	c, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cut {
		c.Close()
		return nil, errCut
	}
	if d.conns == nil {
		d.conns = map[net.Conn]bool{}
	}
	tc := &trackedConn{Conn: c, d: d}
	d.conns[tc] = true
	return tc, nil
}

func (d *cutDialer) Cut() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cut = true
	for c := range d.conns {
		c.(*trackedConn).Conn.Close()
	}
	d.conns = nil
}

func (d *cutDialer) Heal() {
	d.mu.Lock()
	d.cut = false
	d.mu.Unlock()
}

type trackedConn struct {
	net.Conn
	d *cutDialer
}

func (c *trackedConn) Close() error {
	c.d.mu.Lock()
	delete(c.d.conns, c)
	c.d.mu.Unlock()
	return c.Conn.Close()
}
