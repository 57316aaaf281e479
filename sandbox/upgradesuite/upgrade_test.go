// SPDX-License-Identifier: Apache-2.0

package upgradesuite

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/sandbox/chaos"
	"github.com/seed96588659/muster/sandbox/stack/previous"
)

// plan is the test's two rounds: the rolling upgrade from the previous build, then the
// downgrade of one member and its upgrade again.
var plan = [][]chaos.Kind{{chaos.RollingUpgrade}, {chaos.MemberDowngrade}}

// TestRollingUpgrade_FromThePreviousProtocolRaisesItOnceAllRunThisBuildAndLosesNothing starts
// three members and two edges on the previous build and provisions a region; mid-batch the
// members are restarted on this build one at a time, followers first, then the edges. The
// cluster protocol must stay at the previous build's until every member runs this one (every
// member's /v1/status, read every 200 ms), then rise to ledger.Protocol. In the next round a
// follower restarted on the previous build must be refused with a clear message and the
// protocol must not move. Both rounds: no node provisioned twice, every node provisioned and
// recorded once, the edges' calls linearizable.
func TestRollingUpgrade_FromThePreviousProtocolRaisesItOnceAllRunThisBuildAndLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the previous commit; starts 3 coordinators, 2 edges and a lab")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "muster-upgrade-test-")
	if err != nil {
		t.Fatal(err)
	}
	var seed uint64 // random
	if s := os.Getenv("MUSTER_UPGRADE_SEED"); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("MUSTER_UPGRADE_SEED: %v", err)
		}
	}
	var out bytes.Buffer
	o := chaos.DefaultOptions()
	o.Dir, o.Rounds, o.Seed, o.Out = filepath.Join(dir, "run"), len(plan), seed, &out
	o.Regions, o.Emulated = []string{"eu"}, 200 // one region: two edges
	o.Plan, o.Kinds = plan, []chaos.Kind{chaos.RollingUpgrade, chaos.MemberDowngrade}
	sum, err := chaos.Run(ctx, o)
	t.Logf("output:\n%s", out.String())
	if err != nil {
		t.Fatalf("%v (directory kept: %s; rerun with MUSTER_UPGRADE_SEED=%d)", err, dir, sum.Seed)
	}
	if len(sum.Rounds) != len(plan) || !sum.Passed() {
		t.Fatalf("%d rounds, passed %v (directory kept: %s; rerun with MUSTER_UPGRADE_SEED=%d)", len(sum.Rounds), sum.Passed(), dir, sum.Seed)
	}
	for _, r := range sum.Rounds {
		if len(r.Events) != 1 {
			t.Fatalf("round %d injected %d faults, want 1", r.Round, len(r.Events))
		}
		if ev := r.Events[0]; ev.Start.IsZero() || ev.Err != nil {
			t.Errorf("round %d: %s not done: %v", r.Round, ev.Kind, ev.Err)
		}
		if c := r.Check; len(c.DoubleProvisioned) != 0 || len(c.Lost) != 0 || len(c.NotOnce) != 0 || c.Lin.Result != porcupine.Ok {
			t.Errorf("round %d: %s", r.Round, c.Summary())
		}
	}
	up, down := sum.Rounds[0].Events[0], sum.Rounds[1].Events[0]
	if up.Progress >= 1 {
		t.Errorf("the upgrade began with %.0f%% of the round's nodes configured: not under load", 100*up.Progress)
	}
	if want := fmt.Sprintf("-> %d once the last member", ledger.Protocol); !strings.Contains(up.Detail, want) {
		t.Errorf("the rolling upgrade does not say %q: %s", want, up.Detail)
	}
	if !strings.Contains(down.Detail, "needs a newer muster-coordinator") && !strings.Contains(down.Detail, "upgrade it first") {
		t.Errorf("the downgrade of %s was not refused by name: %s", down.Target, down.Detail)
	}
	t.Logf("previous build %s: %s", previous.Commit, up.Detail)
	t.Logf("downgrade: %s", down.Detail)
	_ = os.RemoveAll(dir)
}
