// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/seed96588659/muster/sandbox/fleet/lab"
)

// shortPlan is the chaos suite's short version for `make test`: a leader SIGKILL mid-batch, an
// operator pause with a clock step, a leader partition with a cluster restart, an edge SIGKILL
// (its journal) with an edge SIGSTOP, then a mix drawn from the seed, which is random unless
// MUSTER_CHAOS_SEED names one (the output prints it).
var shortPlan = [][]Kind{{LeaderKill}, {OperatorPause, ClockStep}, {LeaderPartition, ClusterRestart}, {EdgeKill, EdgeStop}, nil}

// TestChaos_ShortRun runs the short plan's rounds against real coordinator and edge processes:
// every check must pass (each round's edge call history linearizable) and every planned fault
// must have been injected.
func TestChaos_ShortRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 3 coordinators, 3 edges and a lab")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "muster-chaos-test-")
	if err != nil {
		t.Fatal(err)
	}
	bin, err := lab.BuildNodeBinary(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var seed uint64 // random
	if s := os.Getenv("MUSTER_CHAOS_SEED"); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("MUSTER_CHAOS_SEED: %v", err)
		}
	}
	var out bytes.Buffer
	o := DefaultOptions()
	o.Dir, o.Rounds, o.Seed, o.Emulated, o.Real = filepath.Join(dir, "run"), len(shortPlan), seed, 150, 1
	o.NodeBinary, o.Plan, o.Out = bin, shortPlan, &out
	sum, err := Run(ctx, o)
	t.Logf("chaos output:\n%s", out.String())
	if err != nil {
		t.Fatalf("%v (directory kept: %s; rerun with MUSTER_CHAOS_SEED=%d)", err, dir, sum.Seed)
	}
	defer os.RemoveAll(dir)
	if len(sum.Rounds) != len(shortPlan) || !sum.Passed() {
		t.Fatalf("%d rounds, passed %v (rerun with MUSTER_CHAOS_SEED=%d)", len(sum.Rounds), sum.Passed(), sum.Seed)
	}
	for i, r := range sum.Rounds {
		if shortPlan[i] != nil && len(r.Events) != len(shortPlan[i]) {
			t.Errorf("round %d injected %d faults, want %d", r.Round, len(r.Events), len(shortPlan[i]))
		}
		if r.Check.Lin.Result != porcupine.Ok || r.Check.Lin.Calls == 0 {
			t.Errorf("round %d: edge call history %s, want linearizable", r.Round, r.Check.Lin.Short())
		}
		for _, e := range r.Events {
			if e.Start.IsZero() || e.Err != nil {
				t.Errorf("round %d: fault %s not injected: %v", r.Round, e.Kind, e.Err)
			}
		}
	}
	if len(sum.Stalls()) < 1 {
		t.Errorf("stalls %v, want one for the leader SIGKILL at least", sum.Stalls())
	}
}
