// SPDX-License-Identifier: Apache-2.0

package edgesuite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/choria-io/go-choria/backoff"
	election "github.com/choria-io/go-choria/providers/election/streams"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/app"
	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/broker"
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

// campaigner is a second campaigner in the region's election, built with go-choria's election
// package as choria-provisioner's leader_election is, over the provisioning account.
type campaigner struct {
	leading atomic.Bool
	stop    context.CancelFunc
	done    chan error
	halted  sync.Once
}

func startCampaigner(t *testing.T, l *lab.Lab, tm electionTimings) *campaigner {
	t.Helper()
	b := l.Region(region).Broker()
	tlsc, err := b.ClientTLS(lab.ClientIdentity(region, 3))
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(b.URL(), nats.Secure(tlsc), nats.UserInfo(broker.ProvisioningUser, b.ProvisioningPassword()), nats.Timeout(10*time.Second))
	if err != nil {
		t.Fatalf("campaigner: connect as the provisioner: %v", err)
	}
	t.Cleanup(nc.Close)
	kv, err := broker.ElectionKV(nc)
	if err != nil {
		t.Fatal(err)
	}
	c := &campaigner{done: make(chan error, 1)}
	bo := backoff.TwentySec
	if tm.backoff != nil {
		bo = *tm.backoff
	}
	e, err := election.NewElection(campaignerName, "provisioner", kv, election.WithBackoff(bo),
		election.OnWon(func() { c.leading.Store(true) }), election.OnLost(func() { c.leading.Store(false) }))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.stop = cancel
	go func() { c.done <- e.Start(ctx) }()
	t.Cleanup(c.halt)
	return c
}

// halt stops campaigning and returns once the election returned; the key stays until its TTL.
func (c *campaigner) halt() {
	c.halted.Do(func() {
		c.stop()
		<-c.done
	})
}

// candidateCampaigns counts the campaigns go-choria's election made as a candidate in the
// `provisioner` election, by anyone but the campaigner (go-choria counts them in Prometheus's
// default registry).
func candidateCampaigns(t *testing.T) float64 {
	t.Helper()
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, f := range families {
		if f.GetName() != "choria_election_campaigns" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["election"] == "provisioner" && labels["state"] == "candidate" && labels["identity"] != campaignerName {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

func pausedGauge(t *testing.T, e *labkit.Edge) float64 {
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
	other := startCampaigner(t, l, tm)
	// go-choria's election waits up to 5 s before its first campaign.
	testkit.WaitFor(t, 2*time.Minute, "the other campaigner to lead", other.leading.Load)

	before := candidateCampaigns(t)
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
		n := candidateCampaigns(t) - before
		return n >= lost, fmt.Sprintf("%v candidate campaigns", n)
	})
	if got := re.App.Edge.Election(); got != edge.ElectionCandidate {
		t.Fatalf("edge's election state %q while the other campaigner leads, want %q", got, edge.ElectionCandidate)
	}
	if got := pausedGauge(t, re); got != 1 {
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
	other.halt()
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
	if got := pausedGauge(t, re); got != 0 {
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
