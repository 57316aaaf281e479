// SPDX-License-Identifier: Apache-2.0

package clustersuite

import (
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/choria-io/go-choria/backoff"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/pkg/testkit/proxy"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/labkit"
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

// runningEdge is one in-process edge of the lab, in cluster mode unless standalone, whose calls
// to the coordinators a test can cut.
type runningEdge struct {
	*labkit.Edge
	cut *proxy.Dialer
}

type edgeSpec struct {
	region string
	n      int // lab client identity and credential number
	// standalone runs without coordinators (the benchmark's baseline).
	standalone bool
	tune       func(*config.Config)
	tuneEdge   func(*edge.Options)
	// latency is the one-way delay of every link to the coordinators (an edge in another
	// datacenter); zero is none.
	latency proxy.Latency
	// electionBackoff, when set, spaces the campaigns of leader_election.
	electionBackoff *backoff.Policy
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
	// Every call to the coordinators goes through a dialer the test can cut: a partition
	// between this edge and all of them.
	cut := &proxy.Dialer{Name: client.Identity, Jitter: proxy.UniformJitter}
	if spec.latency != (proxy.Latency{}) {
		cut.Latency = func(string) proxy.Latency { return spec.latency }
	}
	t.Cleanup(func() { cut.Close() })
	ao := labkit.EdgeOptions(spec.tuneEdge)
	if spec.electionBackoff != nil {
		ao.ElectionBackoff = *spec.electionBackoff
	}
	ao.CoordinatorHTTP = &http.Client{Transport: &http.Transport{DialContext: cut.DialContext, MaxIdleConnsPerHost: 16}}
	return &runningEdge{Edge: labkit.StartEdge(t, client.Identity, cfg, ao, slog.LevelInfo, 6<<10), cut: cut}
}
