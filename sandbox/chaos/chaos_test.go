// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/seed96588659/muster/sandbox/lab"
)

// shortPlan is the chaos suite's short version for `make test`: a leader SIGKILL mid-batch,
// then an operator pause with a clock step, then a leader partition with a cluster restart.
var shortPlan = [][]Kind{{LeaderKill}, {OperatorPause, ClockStep}, {LeaderPartition, ClusterRestart}}

// TestChaos_ShortRun runs three rounds of the chaos suite against real coordinator and edge
// processes: every check must pass and every planned fault must have been injected.
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
	var out bytes.Buffer
	sum, err := Run(ctx, Options{
		Dir: filepath.Join(dir, "run"), Rounds: len(shortPlan), Seed: 20261201, Emulated: 150, Real: 1,
		NodeBinary: bin, Plan: shortPlan, Out: &out,
	})
	t.Logf("chaos output:\n%s", out.String())
	if err != nil {
		t.Fatalf("%v (directory kept: %s)", err, dir)
	}
	defer os.RemoveAll(dir)
	if len(sum.Rounds) != len(shortPlan) || !sum.Passed() {
		t.Fatalf("%d rounds, passed %v", len(sum.Rounds), sum.Passed())
	}
	for i, r := range sum.Rounds {
		if len(r.Events) != len(shortPlan[i]) {
			t.Errorf("round %d injected %d faults, want %d", r.Round, len(r.Events), len(shortPlan[i]))
		}
		for _, e := range r.Events {
			if e.Start.IsZero() || e.Err != nil {
				t.Errorf("round %d: fault %s not injected: %v", r.Round, e.Kind, e.Err)
			}
		}
	}
	if len(sum.Stalls()) != 1 {
		t.Errorf("stalls %v, want one for the leader SIGKILL", sum.Stalls())
	}
}
