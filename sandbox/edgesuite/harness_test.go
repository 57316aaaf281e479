// SPDX-License-Identifier: Apache-2.0

package edgesuite

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/app"
	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/pkg/gobuild"
	"github.com/seed96588659/muster/sandbox/fleet/audit"
	"github.com/seed96588659/muster/sandbox/fleet/faults"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/labkit"
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

// startEdge builds an edge from the lab region's edge configuration, adjusted by tune, and runs it
// until the test ends.
func startEdge(t *testing.T, l *lab.Lab, tune func(*config.Config), tuneEdge func(*edge.Options), opts ...func(*app.Options)) *labkit.Edge {
	t.Helper()
	cfg := labkit.EdgeConfig(t, l, region, bins.helper)
	cfg.Interval = 3 * time.Second
	cfg.LogLevel = "debug"
	if tune != nil {
		tune(cfg)
	}
	ao := labkit.EdgeOptions(tuneEdge)
	for _, o := range opts {
		o(&ao)
	}
	return labkit.StartEdge(t, "standalone", cfg, ao, slog.LevelDebug, 8<<10)
}

// withRealTimeouts keeps go-choria's reply windows: a real release_update may take 20 s.
func withRealTimeouts(o *app.Options) { o.RPCTimeout = 0 }

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
