// SPDX-License-Identifier: Apache-2.0

//go:build muster_failpoints

package coordinator

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFailpoint_ClockStepShiftsTheWallClockOnly steps the wall clock forwards and backwards
// through the failpoint file; the monotonic reading never moves with it.
func TestFailpoint_ClockStepShiftsTheWallClockOnly(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(FailpointsDirEnv, dir)
	c := newSystemClock()
	for _, step := range []time.Duration{90 * time.Second, -2 * time.Minute} {
		if err := os.WriteFile(filepath.Join(dir, ClockStepFile), []byte(step.String()+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		before, mono := time.Now(), c.Monotonic()
		got := c.Now()
		after := time.Now()
		if got.Before(before.Add(step).Add(-time.Second)) || got.After(after.Add(step).Add(time.Second)) {
			t.Errorf("step %s: Now %s, want about %s", step, got, before.Add(step))
		}
		if d := c.Monotonic() - mono; d < 0 || d > time.Minute {
			t.Errorf("step %s moved the monotonic reading by %s", step, d)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ClockStepFile), []byte("not a duration"), 0o600); err != nil {
		t.Fatal(err)
	}
	if d := time.Until(c.Now()); d > time.Second || d < -time.Second {
		t.Errorf("an unparsable failpoint stepped the clock by %s", d)
	}
}
