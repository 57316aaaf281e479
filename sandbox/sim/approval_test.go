// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"testing"
)

// TestSim_HeldQueueUnderEveryFault: with approval policies and a twin in every seed, under the
// faults each seed draws, nodes are held and approved and every invariant holds: no held or
// banned node is granted, no approve offers a node inside another edge's lock.
func TestSim_HeldQueueUnderEveryFault(t *testing.T) {
	sum := Sweep(1, 12, 0, Options{Policies: true})
	for _, err := range sum.Errors {
		t.Error(err)
	}
	for _, res := range sum.Failed {
		t.Errorf("seed %d: %v\nreplay: %s", res.Seed, res.Violation, Replay(Options{Seed: res.Seed, Policies: true}))
	}
	if sum.Stats.Holds == 0 || sum.Stats.Approvals == 0 {
		t.Fatalf("12 seeds with policies: %d holds, %d approvals; want both", sum.Stats.Holds, sum.Stats.Approvals)
	}
}

// TestSim_DuplicateResponderWithoutHoldIsCaught: edges that report a second responder as a
// plain failure (the builds before the held queue) let the ledger offer the node again without
// an approve, and the checker sees it; the same seeds with the wire prefix hold.
func TestSim_DuplicateResponderWithoutHoldIsCaught(t *testing.T) {
	broken := faultSeeds(t, 1, 6, Options{DupAsFailure: true})
	if len(broken[InvHeld]) == 0 {
		t.Fatalf("seeds 1..6 with a duplicate responder sent as a plain failure: no held violation (broken: %v)", broken)
	}
	t.Logf("a duplicate responder sent as a plain failure: %v", broken)
	if broken := faultSeeds(t, 1, 6, Options{Policies: true}); len(broken) > 0 {
		t.Fatalf("seeds 1..6 with the wire prefix: %v", broken)
	}
}
