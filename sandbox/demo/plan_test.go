// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/sandbox/fleet/audit"
	"github.com/seed96588659/muster/sandbox/fleet/recorder"
)

func TestNewPlan_LaysOutOutdatedAndFaultyNodes(t *testing.T) {
	p := newPlan("eu", 2, 300, true)
	if len(p.nodes) != 302 {
		t.Fatalf("nodes = %d, want 302", len(p.nodes))
	}
	want := map[Expect]int{Healthy: 290, Upgrade: 6, FailConfigure: 1, Duplicate: 1, Deferred: 1, ShutDown: 1, Silent: 1, Flapping: 1}
	for e, n := range want {
		if got := p.count(e); got != n {
			t.Errorf("%s: %d nodes, want %d", e, got, n)
		}
	}
	if p.succeed() != 296 {
		t.Errorf("succeed = %d, want 296", p.succeed())
	}
	if strings.Join(p.realVersions, ",") != OldVersion+","+TargetVersion {
		t.Errorf("real versions %v, want the first outdated", p.realVersions)
	}
	if !regexp.MustCompile(p.deferRE).MatchString("emu-eu-00296") || regexp.MustCompile(p.deferRE).MatchString("emu-eu-002960") {
		t.Errorf("defer regexp %q does not match exactly emu-eu-00296", p.deferRE)
	}
	for _, r := range p.faults.Rules() {
		if p.expect[r.Select.Identity] == Healthy {
			t.Errorf("fault rule %s on a node planned healthy", r.Source)
		}
	}
}

// act is one recorded action on node id.
func act(id, action string, ok bool) recorder.Action {
	return recorder.Action{Time: time.Now(), Region: "eu", Node: id, Action: action, Caller: "choria=edge-eu-1.mcollective", OK: ok}
}

func TestEvaluate_DoneOnlyWhenEveryNodeAndCounterArrived(t *testing.T) {
	p := newPlan("eu", 0, 10, true)
	var log []recorder.Action
	for _, id := range p.nodes {
		switch p.expect[id] {
		case Healthy:
			log = append(log, act(id, audit.Configure, true), act(id, audit.Restart, true))
		case Upgrade:
			log = append(log, act(id, audit.ReleaseUpdate, true))
		case FailConfigure:
			log = append(log, act(id, audit.Configure, false))
		case Duplicate, Deferred:
			log = append(log, act(id, "choria_provision#jwt", true))
		case ShutDown:
			log = append(log, act(id, audit.Shutdown, true))
		case Flapping:
			log = append(log, act(id, audit.Configure, true), act(id, audit.Restart, true), act(id, audit.Configure, true), act(id, audit.Restart, true))
		}
	}
	snap := Snapshot{Outcomes: map[string]int64{"failed": 2, "deferred": 1, "shutdown": 1}}
	st := p.evaluate(audit.Build(log), snap)
	if st.done() {
		t.Fatalf("done although upgraded nodes were not provisioned after their upgrade")
	}
	if n := len(st.Missing); n != p.count(Upgrade) {
		t.Errorf("missing %v, want only the %d upgraded nodes", st.Missing, p.count(Upgrade))
	}
	for _, id := range p.nodes {
		if p.expect[id] == Upgrade {
			log = append(log, act(id, audit.Configure, true), act(id, audit.Restart, true))
		}
	}
	snap.InFlight = 1
	if st := p.evaluate(audit.Build(log), snap); st.done() || !strings.Contains(strings.Join(st.Missing, ";"), "in flight") {
		t.Errorf("done with a host flow in flight: %v", st.Missing)
	}
	snap.InFlight, snap.Outcomes["failed"] = 0, 1
	if st := p.evaluate(audit.Build(log), snap); st.done() {
		t.Errorf("done with one failed result for two failing nodes")
	}
	snap.Outcomes["failed"] = 2
	st = p.evaluate(audit.Build(log), snap)
	if !st.done() || len(st.Unexpected) > 0 {
		t.Errorf("not done: missing %v, unexpected %v", st.Missing, st.Unexpected)
	}
	for e := range st.Met {
		if st.Met[e] != p.count(e) {
			t.Errorf("%s: met %d of %d", e, st.Met[e], p.count(e))
		}
	}
}

func TestParseMetrics_ReadsTheEdgeCounters(t *testing.T) {
	text := `# TYPE choria_provisioner_discovered counter
choria_provisioner_discovered{site="eu"} 20
choria_provisioner_event_discovered{site="eu"} 2
# TYPE choria_provisioner_busy_workers gauge
choria_provisioner_busy_workers{site="eu"} 3
choria_provisioner_provisioned{site="eu"} 19
choria_provisioner_provision_errors{site="eu"} 1
# TYPE muster_edge_results_total counter
muster_edge_results_total{outcome="failed",site="eu"} 1
muster_edge_results_total{outcome="provisioned",site="eu"} 19
muster_edge_results_total{outcome="upgrade_sent",site="eu"} 2
`
	s, err := parseMetrics(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if s.Discovered != 20 || s.EventDiscovered != 2 || s.InFlight != 3 || s.Provisioned != 19 || s.Errors != 1 {
		t.Errorf("snapshot %+v", s)
	}
	if s.Outcomes["provisioned"] != 19 || s.Outcomes["upgrade_sent"] != 2 || failedOutcomes(s) != 1 {
		t.Errorf("outcomes %v", s.Outcomes)
	}
	if _, err := parseMetrics(strings.NewReader("not metrics {")); err == nil {
		t.Errorf("garbage parsed")
	}
}
