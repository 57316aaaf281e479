// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/testkit"
)

// TestRun_SaysWhereItLeavesItsFilesAndHowBig: a run keeps the lab, the members' data and the
// logs in its directory, hundreds of megabytes at the defaults; its last lines say where, how
// big, and the command that removes them, even when it failed.
func TestRun_SaysWhereItLeavesItsFilesAndHowBig(t *testing.T) {
	dir := t.TempDir()
	out := &testkit.LogBuffer{}
	// No coordinator binary: the run starts the lab, fails, and stops it.
	o := Options{Dir: dir, Real: NoReal, Emulated: minEmulated, BinDir: t.TempDir(), Out: out, Timeout: time.Minute, StopGrace: 10 * time.Second}
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "coordinator binary") {
		t.Fatalf("run without a coordinator binary: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := strings.Join(lines[max(0, len(lines)-2):], "\n")
	for _, want := range []string{dir, " MB", "rm -rf " + dir} {
		if !strings.Contains(last, want) {
			t.Errorf("the last lines lack %q:\n%s", want, out)
		}
	}
}
