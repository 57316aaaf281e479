// SPDX-License-Identifier: Apache-2.0

package metrics_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed96588659/muster/coordinator/metrics"
	"github.com/seed96588659/muster/pkg/api"
)

func sources() metrics.Sources {
	return metrics.Sources{
		Leader: func() bool { return true }, Term: func() uint64 { return 4 }, AppliedIndex: func() uint64 { return 9 },
		LeasesActive: func() int { return 1 }, DroppedObservations: func() uint64 { return 0 },
		ClusterProtocol: func() int { return 2 }, LedgerCommits: func() uint64 { return 5 },
		Nodes: func() (map[string]map[api.NodeState]int, error) {
			return map[string]map[api.NodeState]int{"eu": {api.StateWaiting: 3}}, nil
		},
	}
}

// Every series of every muster_coordinator_* family carries member="<id>" next to its own
// labels, and the names stay as they were.
func TestNew_EverySeriesNamesTheMember(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg, "c2", sources())
	if err != nil {
		t.Fatal(err)
	}
	// Vectors export a series only once used.
	m.ResultsApplied.WithLabelValues(string(api.OutcomeProvisioned)).Inc()
	m.ApplyLatency.WithLabelValues("grant").Observe(0.001)

	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "muster_coordinator_") {
			t.Errorf("unexpected family %s", mf.GetName())
			continue
		}
		names[mf.GetName()] = true
		for _, s := range mf.GetMetric() {
			member := ""
			for _, lp := range s.GetLabel() {
				if lp.GetName() == "member" {
					member = lp.GetValue()
				}
			}
			if member != "c2" {
				t.Errorf("%s %v: member label %q, want c2", mf.GetName(), s.GetLabel(), member)
			}
		}
	}
	for _, want := range []string{"muster_coordinator_leader", "muster_coordinator_term", "muster_coordinator_ledger_nodes",
		"muster_coordinator_results_applied_total", "muster_coordinator_apply_seconds", "muster_coordinator_lease_grants_total", "muster_coordinator_cluster_protocol", "muster_coordinator_operator_nodes_total",
		"muster_coordinator_ledger_commits_total"} {
		if !names[want] {
			t.Errorf("%s not exported (got %d families)", want, len(names))
		}
	}
	if len(names) != 22 {
		t.Errorf("%d families exported, want the 22 the package declares", len(names))
	}
}

func TestNew_RefusesAnEmptyMember(t *testing.T) {
	_, err := metrics.New(prometheus.NewRegistry(), "", sources())
	if err == nil || !strings.Contains(err.Error(), "member id") {
		t.Fatalf("empty member accepted: %v", err)
	}
}
