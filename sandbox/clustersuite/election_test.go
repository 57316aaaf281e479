// SPDX-License-Identifier: Apache-2.0

package clustersuite

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/choria-io/go-choria/backoff"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/audit"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/labkit"
)

// TestClusterEdge_TakesLeasesOnlyWhileItLeadsTheElection: a cluster edge with leader_election
// beside a campaigner holding choria-provisioner's election registers nothing and takes no
// lease; once the campaigner stops the edge leads, and the ledger ends with every node
// provisioned, each restarted once, none acted on by two callers.
func TestClusterEdge_TakesLeasesOnlyWhileItLeadsTheElection(t *testing.T) {
	const region, count = "le", 30
	const name = "choria-provisioner.example"
	short := &backoff.Policy{Millis: []int{250, 500, 1000}}
	l := startLab(t, lab.Options{Regions: []string{region}, Emulated: count, Streams: true, ElectionTTL: 4 * time.Second})
	other := labkit.StartCampaigner(t, l, region, lab.ClientIdentity(region, 3), name, short)
	testkit.WaitFor(t, time.Minute, "the other campaigner to lead", other.Leading)

	before := labkit.CandidateCampaigns(t, name)
	e := startEdge(t, l, edgeSpec{region: region, n: 1, electionBackoff: short, tune: func(c *config.Config) { c.LeaderElection = true }})
	testkit.WaitFor(t, time.Minute, "the edge to lose three campaigns to the leader", func() (bool, string) {
		n := labkit.CandidateCampaigns(t, name) - before
		return n >= 3, fmt.Sprintf("%v candidate campaigns", n)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns, err := suite.cluster.nodes(ctx, region)
	if err != nil {
		t.Fatal(err)
	}
	if rep := labkit.LabReport(t, l); len(ns) != 0 || rep.Totals.Actions != 0 || e.App.Edge.Election() != edge.ElectionCandidate || e.PausedGauge(t) != 1 {
		t.Fatalf("while the other campaigner led: %d nodes in the ledger, %d actions on nodes, election %q, paused %v; want none, none, candidate, 1",
			len(ns), rep.Totals.Actions, e.App.Edge.Election(), e.PausedGauge(t))
	}

	stopped := time.Now()
	other.Halt()
	waitNodesIn(t, ctx, region, count, api.StateProvisioned, 2*time.Minute, "every node provisioned once the edge leads")
	t.Logf("cluster edge: every node provisioned %v after the other campaigner stopped (4s election TTL)", time.Since(stopped).Round(10*time.Millisecond))

	rep := labkit.LabReport(t, l)
	if len(rep.DoubleProvisioned) > 0 {
		t.Fatalf("double provisioned: %+v", rep.DoubleProvisioned)
	}
	for i := range count {
		if got := acceptedCount(rep, emu(region, i), audit.Restart); got != 1 {
			t.Errorf("%s accepted %d restarts, want exactly 1", emu(region, i), got)
		}
	}
}
