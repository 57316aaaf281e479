// SPDX-License-Identifier: Apache-2.0

//go:build !muster_failpoints

package coordinator

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFailpoint_AbsentFromAReleaseBuild writes a clock step a failpoint build would obey; a
// release build's clock ignores it.
func TestFailpoint_AbsentFromAReleaseBuild(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("MUSTER_FAILPOINTS_DIR", dir)
	if err := os.WriteFile(filepath.Join(dir, "clock-step"), []byte("1h"), 0o600); err != nil {
		t.Fatal(err)
	}
	if d := time.Until(newSystemClock().Now()); d > time.Minute || d < -time.Minute {
		t.Fatalf("release build clock stepped by %s", d)
	}
}
