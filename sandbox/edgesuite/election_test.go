// SPDX-License-Identifier: Apache-2.0

package edgesuite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/choria-io/go-choria/backoff"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/app"
	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/labkit"
)

// campaignerName is the other campaigner's value of the election key, as choria-provisioner's
// would be its Choria identity.
const campaignerName = "choria-provisioner.example"

// electionTimings are the election's: the broker's bucket TTL (0: go-choria's one minute) and
// the campaign backoff of both campaigners (nil: choria-provisioner's backoff.TwentySec).
type electionTimings struct {
	ttl     time.Duration
	backoff *backoff.Policy
}

// shortElection shortens the election to what go-choria's package allows, so the takeover
// takes seconds.
var shortElection = electionTimings{ttl: 4 * time.Second, backoff: &backoff.Policy{Millis: []int{250, 500, 1000}}}

// TestEdge_TakesOverFromChoriaProvisionersElection: an edge with leader_election campaigns in
// the election choria-provisioner uses while another campaigner holds it: it waits, sending
// nothing to any node, paused; once that campaigner stops, the edge takes over within the
// election's timing and provisions every node exactly once, no node acted on by two callers.
func TestEdge_TakesOverFromChoriaProvisionersElection(t *testing.T) {
	takeOver(t, shortElection, 100)
}

// TestEdge_TakesOverAtChoriaProvisionersElectionTimings measures the takeover at go-choria's
// and choria-provisioner's own timings (a one-minute TTL, backoff.TwentySec): about two
// minutes, so it runs only with MUSTER_ELECTION_DEFAULTS=1.
func TestEdge_TakesOverAtChoriaProvisionersElectionTimings(t *testing.T) {
	if os.Getenv("MUSTER_ELECTION_DEFAULTS") != "1" {
		t.Skip("set MUSTER_ELECTION_DEFAULTS=1 to measure the takeover at the production timings (minutes)")
	}
	takeOver(t, electionTimings{}, 100)
}

func takeOver(t *testing.T, tm electionTimings, nodes int) {
	l := startLab(t, lab.Options{Emulated: nodes, Streams: true, ElectionTTL: tm.ttl})
	other := labkit.StartCampaigner(t, l, region, lab.ClientIdentity(region, 3), campaignerName, tm.backoff)
	// go-choria's election waits up to 5 s before its first campaign.
	testkit.WaitFor(t, 2*time.Minute, "the other campaigner to lead", other.Leading)

	before := labkit.CandidateCampaigns(t, campaignerName)
	re := startEdge(t, l, func(c *config.Config) { c.LeaderElection = true }, nil, func(o *app.Options) {
		if tm.backoff != nil {
			o.ElectionBackoff = *tm.backoff
		}
	})
	testkit.WaitFor(t, 10*time.Second, "the edge running", re.App.Edge.Ready)
	// The edge has lost three campaigns to the leader (one with the default timings).
	lost := 3.0
	if tm.backoff == nil {
		lost = 1
	}
	testkit.WaitFor(t, 3*time.Minute, "the edge to lose campaigns to the leader", func() (bool, string) {
		n := labkit.CandidateCampaigns(t, campaignerName) - before
		return n >= lost, fmt.Sprintf("%v candidate campaigns", n)
	})
	if got := re.App.Edge.Election(); got != edge.ElectionCandidate {
		t.Fatalf("edge's election state %q while the other campaigner leads, want %q", got, edge.ElectionCandidate)
	}
	if got := re.PausedGauge(t); got != 1 {
		t.Errorf("choria_provisioner_paused %v while the other campaigner leads, want 1", got)
	}
	if rep := labkit.LabReport(t, l); rep.Totals.Actions != 0 || len(re.Touched()) != 0 {
		t.Fatalf("while the other campaigner led, the nodes received %d actions and the edge has results for %d nodes, want none",
			rep.Totals.Actions, len(re.Touched()))
	}
	if !strings.Contains(re.Logs.String(), "campaigning in the leader election") {
		t.Error("the edge's log does not say it waits for the election")
	}

	stopped := time.Now()
	other.Halt()
	testkit.WaitFor(t, 3*time.Minute, "the edge to lead", func() bool { return re.App.Edge.Election() == edge.ElectionLeader })
	leads := time.Since(stopped)
	testkit.WaitFor(t, 3*time.Minute, "every node provisioned", func() (bool, string) {
		return re.Finished() == nodes, fmt.Sprintf("%d of %d", re.Finished(), nodes)
	})

	rep := labkit.LabReport(t, l)
	assertNoDoubleProvisioning(t, rep)
	var first time.Time
	for _, id := range l.Region(region).EmulatedNodes() {
		if got := acceptedCount(rep, id, "choria_provision#restart"); got != 1 {
			t.Errorf("%s accepted %d restarts, want exactly 1", id, got)
		}
		if n := rep.Nodes[id]; n != nil && n.Provisioned && (first.IsZero() || n.ProvisionedAt.Before(first)) {
			first = n.ProvisionedAt
		}
	}
	if callers := rep.Totals.Callers; callers != 1 {
		t.Errorf("%d callers acted on the nodes, want the edge alone", callers)
	}
	if got := re.PausedGauge(t); got != 0 {
		t.Errorf("choria_provisioner_paused %v once the edge leads, want 0", got)
	}
	ttl := tm.ttl
	if ttl == 0 {
		ttl = time.Minute
	}
	t.Logf("takeover at a %v election TTL: the edge led %v after the other campaigner stopped; first node provisioned after %v; all %d after %v",
		ttl, leads.Round(10*time.Millisecond), first.Sub(stopped).Round(10*time.Millisecond), nodes, time.Since(stopped).Round(10*time.Millisecond))
}

// TestEdge_LeaderElectionNeedsChoriaStreams: leader_election on a broker without Choria
// Streams stops the edge at start with an error naming leader_election and the remedy.
func TestEdge_LeaderElectionNeedsChoriaStreams(t *testing.T) {
	l := startLab(t, lab.Options{Emulated: 1})
	cfg := labkit.EdgeConfig(t, l, region, bins.helper)
	cfg.LeaderElection = true
	a, err := app.Build(context.Background(), cfg, labkit.EdgeOptions(nil))
	if err == nil {
		a.Close()
		t.Fatal("an edge with leader_election started against a broker without Choria Streams")
	}
	for _, want := range []string{"leader_election", "CHORIA_LEADER_ELECTION", "Choria Streams"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	var se *app.StartError
	if !errors.As(err, &se) || !strings.Contains(se.Remedy, "plugin.choria.network.stream.store") {
		t.Errorf("error %v: want a start error whose remedy names plugin.choria.network.stream.store", err)
	}
}
