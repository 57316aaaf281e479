// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/sandbox/fleet/audit"
	"github.com/seed96588659/muster/sandbox/fleet/recorder"
)

// TestCheck_ANewLifeIsProvisionedAgainTwoEdgesOnOneLifeAreNot: a node a re-entry fault brought
// back is provisioned once per life, by any edge; two edges acting on one life are a double
// provisioning, and a node provisioned in two lives that no fault brought back is not
// provisioned exactly once.
func TestCheck_ANewLifeIsProvisionedAgainTwoEdgesOnOneLifeAreNot(t *testing.T) {
	const e1, e2 = "choria=edge-eu-1.mcollective", "choria=edge-eu-2.mcollective"
	step := 0
	var round []recorder.Action
	life := func(node string, inc int, caller string) {
		for _, action := range []string{audit.Configure, audit.Restart} {
			step++
			a := act(time.Duration(step)*time.Second, node, action, caller, true)
			a.Incarnation = inc
			round = append(round, a)
		}
	}
	life("rebuilt", 1, e1)
	life("rebuilt", 2, e2)
	life("flapping", 3, e2)
	life("flapping", 4, e1)
	life("flapping", 5, e2)
	life("healthy", 2, e1)
	// two edges on one life: e2 configures and restarts it after e1's accepted restart
	life("two-edges", 2, e1)
	life("two-edges", 2, e2)
	// provisioned in two lives although no fault brought it back
	life("unarmed", 2, e1)
	life("unarmed", 3, e1)
	// brought back, never provisioned again
	life("not-again", 2, e1)
	// a real node records no incarnation: one restart after a configure, as before
	life("real", 0, e1)

	res := &RoundResult{Events: []*Event{
		{Kind: NodeRebuilt, Reentries: map[string]int{"rebuilt": 1, "not-again": 1}},
		{Kind: NodeFlapping, Reentries: map[string]int{"flapping": 2}},
	}}
	byNode := map[string][]recorder.Action{}
	for _, a := range round {
		byNode[a.Node] = append(byNode[a.Node], a)
	}
	c := Check{DoubleProvisioned: audit.Build(round).DoubleProvisioned}
	rc := roundCheck{c: &c, res: res, rep: audit.Build(round), byNode: byNode, ledger: map[string]api.Node{}}
	for _, id := range slices.Sorted(maps.Keys(byNode)) {
		rc.once(id)
	}
	var notOnce []string
	for _, f := range c.NotOnce {
		notOnce = append(notOnce, f.Node)
	}
	if !slices.Equal(notOnce, []string{"not-again", "two-edges", "unarmed"}) {
		t.Fatalf("not provisioned exactly once: %v, want not-again, two-edges, unarmed\n%s", notOnce, c.Evidence())
	}
	if len(c.DoubleProvisioned) != 1 || c.DoubleProvisioned[0].Node != "two-edges" {
		t.Fatalf("double provisioned: %+v, want only two-edges", c.DoubleProvisioned)
	}
	if ev := c.Evidence(); !strings.Contains(ev, "two-edges: 1 lives provisioned in the round, want 1, at most once each (accepted configures/restarts: life 2: 2/2)") ||
		!strings.Contains(ev, "unarmed: 2 lives provisioned in the round, want 1") || !strings.Contains(ev, "not-again: 1 lives provisioned in the round, want 2") {
		t.Fatalf("evidence does not say which lives:\n%s", ev)
	}
}

func TestParseKinds_ReentryFaultsOnlyWhenNamed(t *testing.T) {
	ks, err := ParseKinds("node-rebuilt, node-flapping")
	if err != nil || !slices.Equal(ks, []Kind{NodeRebuilt, NodeFlapping}) {
		t.Fatalf("ParseKinds = %v, %v", ks, err)
	}
	if slices.Contains(AllKinds, NodeRebuilt) || slices.Contains(AllKinds, NodeFlapping) || coordinatorFault(NodeRebuilt) {
		t.Fatal("a re-entry fault is drawn by default or taken for a coordinator fault")
	}
}
