// SPDX-License-Identifier: Apache-2.0

package clustersuite

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/faults"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/fleet/recorder"
	"github.com/seed96588659/muster/sandbox/labkit"
)

// slowRegion is a lab region of count emulated nodes that answer every request after delay, so
// host flows are in flight long enough to be caught by a pause or a cut, and its one edge, of
// workers workers and batches of as many nodes.
type slowRegion struct {
	region  string
	count   int
	delay   time.Duration
	workers int
}

// start starts the lab and the edge, then waits until the edge's stats are inFlight (what).
func (r slowRegion) start(t *testing.T, what string, inFlight func(edge.Stats) bool) (*lab.Lab, *runningEdge) {
	t.Helper()
	slow := faults.NewSet(faults.Rule{Select: faults.Selector{Region: r.region, Glob: lab.EmulatedPrefix(r.region) + "*"}, Fault: faults.Fault{Delay: r.delay}})
	l := startLab(t, lab.Options{Regions: []string{r.region}, Emulated: r.count, Faults: slow})
	e := startEdge(t, l, edgeSpec{region: r.region, n: 1, tune: func(c *config.Config) {
		c.Workers, c.BatchSize = r.workers, r.workers
		// Its nodes answer the first-seen check's ping after delay too.
		c.NewNodeCheckTimeout = r.delay + config.DefaultNewNodeCheckTimeout
	}})
	testkit.WaitFor(t, time.Minute, what, func() (bool, string) {
		s := e.App.Edge.Stats()
		return inFlight(s), fmt.Sprintf("%+v", s)
	})
	return l, e
}

// The operator's pause is the coordinator's flag: the edge learns it from its heartbeats, starts
// no new attempt, gives back what it had not touched without counting an attempt, and resume
// finishes the region.
func TestCluster_OperatorPauseAndResume(t *testing.T) {
	const region, count = "pz", 24
	l, e := slowRegion{region, count, 150 * time.Millisecond, 4}.start(t, "hosts in flight", func(s edge.Stats) bool {
		return s.InFlight > 0 && s.Outcomes[hostflow.Provisioned] > 0
	})
	c := suite.cluster
	ctx := ctxT(t, 3*time.Minute)
	if _, err := c.admin.Pause(ctx, api.PauseRequest{Reason: "clustersuite"}); err != nil {
		t.Fatalf("pause: %v", err)
	}
	testkit.WaitFor(t, 30*time.Second, "the edge to learn the pause and drain", func() (bool, string) {
		return e.App.Edge.ClusterPaused() && e.App.Edge.Stats().InFlight == 0, fmt.Sprintf("paused %v stats %+v", e.App.Edge.ClusterPaused(), e.App.Edge.Stats())
	})
	drained := time.Now()
	touched := firstTouch(t, l)
	if len(touched) == count {
		t.Fatal("every node was touched before the pause took hold; nothing left to show")
	}
	if _, err := c.admin.Resume(ctx); err != nil {
		t.Fatalf("resume: %v", err)
	}
	resumed := time.Now()
	waitNodesIn(t, ctx, region, count, api.StateProvisioned, 2*time.Minute, "every node provisioned after resume")
	// No node first touched between the drain and the resume: the pause stopped new attempts.
	for id, at := range firstTouch(t, l) {
		if _, before := touched[id]; !before && at.Before(resumed) && at.After(drained) {
			t.Errorf("%s was first touched at %s, while paused", id, at)
		}
	}
	// A node given back during the pause was released: back to waiting without an attempt.
	released := 0
	for i := range count {
		n := mustNode(t, ctx, emu(region, i))
		if hasReason(n, "released by the edge") {
			released++
			if n.Attempts != 0 {
				t.Errorf("released node counts %d attempts:\n%s", n.Attempts, history(n))
			}
		}
	}
	t.Logf("%d nodes touched before the pause took hold, %d released by the pause", len(touched), released)
	if rep := labkit.LabReport(t, l); len(rep.DoubleProvisioned) > 0 {
		t.Fatalf("double provisioned: %+v", rep.DoubleProvisioned)
	}
}

// firstTouch maps each node to the time it first received a request of a host flow.
func firstTouch(t *testing.T, l *lab.Lab) map[string]time.Time {
	t.Helper()
	actions, err := recorder.ReadFile(l.ActionsFile())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]time.Time{}
	for _, a := range actions {
		// Discovery and the edge's check of a first-seen node (rpcutil#ping, before any lease)
		// are not attempts: the host flow sends no ping.
		if strings.HasPrefix(a.Action, "discovery#") || a.Action == "rpcutil#ping" {
			continue
		}
		if at, ok := out[a.Node]; !ok || a.Time.Before(at) {
			out[a.Node] = a.Time
		}
	}
	return out
}

// An edge cut from every coordinator cannot renew: its hosts stop at their next attempt
// boundary once the lease runs out on the edge's own clock, and once the network heals their
// results reach the ledger as stopped by lease loss; the region is then finished, each node once.
func TestCluster_LeaseLossStopsHosts(t *testing.T) {
	const region, count = "ll", 16
	l, e := slowRegion{region, count, 1500 * time.Millisecond, 8}.start(t, "8 hosts in flight", func(s edge.Stats) bool { return s.InFlight == 8 })
	c := suite.cluster
	ctx := ctxT(t, 3*time.Minute)
	e.cut.Partition()
	lost := func() []string {
		var out []string
		for i := range count {
			for _, r := range e.ResultsOf(emu(region, i)) {
				if r.Err != nil && strings.Contains(r.Err.Error(), "stopped by lease loss") {
					out = append(out, r.Identity)
					break
				}
			}
		}
		return out
	}
	testkit.WaitFor(t, 30*time.Second, "hosts stopped by lease loss", func() (bool, string) {
		return len(lost()) > 0 && e.App.Edge.Stats().InFlight == 0, fmt.Sprintf("lost %v stats %+v", lost(), e.App.Edge.Stats())
	})
	e.cut.Heal()
	stopped := lost()
	testkit.WaitFor(t, 30*time.Second, "the ledger to record the lease loss", func() (bool, string) {
		for _, id := range stopped {
			n, err := c.admin.Node(ctx, id)
			if err != nil {
				return false, err.Error()
			}
			found := false
			for _, tr := range n.History {
				found = found || strings.Contains(tr.Error, "stopped by lease loss")
			}
			if !found {
				return false, history(n)
			}
		}
		return true, ""
	})
	waitNodesIn(t, ctx, region, count, api.StateProvisioned, 2*time.Minute, "every node provisioned after the heal")
	rep := labkit.LabReport(t, l)
	if len(rep.DoubleProvisioned) > 0 {
		t.Fatalf("double provisioned: %+v", rep.DoubleProvisioned)
	}
	t.Logf("%d hosts stopped by lease loss: %v", len(stopped), stopped)
}
