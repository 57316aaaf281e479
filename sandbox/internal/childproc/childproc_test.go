// SPDX-License-Identifier: Apache-2.0

package childproc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestProc_KilledThenStartedAgainAppendsToOneLog: a killed child is not running, starts again
// as a new process, and both starts are in its one log; Stop ends the second.
func TestProc_KilledThenStartedAgainAppendsToOneLog(t *testing.T) {
	log := filepath.Join(t.TempDir(), "child.log")
	p := &Proc{Name: "sleeper", Bin: "sleep", Args: []string{"60"}, LogPath: log, Group: true}
	if p.Running() || p.PID() != 0 {
		t.Fatal("running before its first start")
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	first := p.PID()
	if err := p.Start(); err == nil {
		t.Fatal("a second start of a running child was not refused")
	}
	if err := p.Pause(); err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if p.Running() || p.ExitErr() == nil {
		t.Fatalf("after kill: running %v, exit %v", p.Running(), p.ExitErr())
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	if p.PID() == first || !p.Running() {
		t.Fatalf("second start: pid %d (first %d), running %v", p.PID(), first, p.Running())
	}
	if err := p.Stop(10 * time.Second); err == nil || !strings.Contains(err.Error(), "after SIGTERM") {
		t.Fatalf("stop of a child that dies of SIGTERM: %v", err)
	}
	if p.Running() {
		t.Fatal("running after stop")
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "==== start sleeper"); n != 2 {
		t.Fatalf("log has %d start lines, want 2:\n%s", n, b)
	}
}
