// SPDX-License-Identifier: Apache-2.0

package edgesuite

import (
	"testing"
	"time"

	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/audit"
	"github.com/seed96588659/muster/sandbox/fleet/faults"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/labkit"
)

// provisionedCount is how many of identity's results say provisioned.
func provisionedCount(re *labkit.Edge, identity string) int {
	n := 0
	for _, r := range re.ResultsOf(identity) {
		if r.Outcome == hostflow.Provisioned {
			n++
		}
	}
	return n
}

// TestEdge_ProvisionsARebuiltNodeAgainAndAFlappingOneEachTime: a standalone edge, as
// choria-provisioner does, provisions every node that shows up in provisioning mode: a rebuilt
// node a second time, a flapping one after each of its returns, each life once.
func TestEdge_ProvisionsARebuiltNodeAgainAndAFlappingOneEachTime(t *testing.T) {
	t.Parallel()
	const flaps = 2
	l := startLab(t, lab.Options{
		Emulated:          4,
		EmulatedTimeScale: 0.1,
		Faults: faults.NewSet(
			rule(emu(1), faults.Fault{Rebuilt: &faults.Reentry{After: time.Second, Times: 1}}),
			rule(emu(2), faults.Fault{Flapping: &faults.Reentry{After: time.Second, Times: flaps}}),
		),
	})
	re := startEdge(t, l, nil, nil)
	fleet := l.Region(region).Fleet()
	want := map[string]int{emu(0): 1, emu(1): 2, emu(2): 1 + flaps, emu(3): 1}
	testkit.WaitFor(t, 3*time.Minute, "every life of every node provisioned", func() bool {
		for id, n := range want {
			st, _ := fleet.State(id)
			if provisionedCount(re, id) < n || st.Mode != "provisioned" {
				return false
			}
		}
		return true
	})
	rep := labkit.LabReport(t, l)
	assertNoDoubleProvisioning(t, rep)
	for id, n := range want {
		if got := acceptedCount(rep, id, audit.Restart); got != n {
			t.Errorf("%s accepted %d restarts, want %d", id, got, n)
		}
		if got := provisionedCount(re, id); got != n {
			t.Errorf("%s has %d provisioned results, want %d: %+v", id, got, n, re.ResultsOf(id))
		}
		if node := rep.Nodes[id]; node == nil || node.Episodes != n || !node.Provisioned {
			t.Errorf("%s in the report: %+v, want %d episodes ending provisioned", id, node, n)
		}
	}
	if st, _ := fleet.State(emu(2)); st.Reentries != flaps || st.Incarnation != 1+flaps {
		t.Errorf("flapping node: %+v", st)
	}
}
