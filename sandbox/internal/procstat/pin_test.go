// SPDX-License-Identifier: Apache-2.0

package procstat

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestPin_RestrictsEveryThreadOfAProcessAndWhatItStartsLater(t *testing.T) {
	all, err := CPUs(0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 2 {
		t.Skipf("one CPU (%v): nothing to restrict to", all)
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	last := all[len(all)-1]
	if err := Pin(cmd.Process.Pid, last); err != nil {
		t.Fatal(err)
	}
	got, err := CPUs(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []int{last}) {
		t.Fatalf("pinned to %d: runs on %v", last, got)
	}
}

func TestPin_NamesTheProcessItCouldNotPin(t *testing.T) {
	err := Pin(1<<30, 0)
	if err == nil {
		t.Fatal("pinned a process that does not exist")
	}
	if got := err.Error(); !strings.Contains(got, "pid 1073741824") {
		t.Fatalf("error %q does not name the pid", got)
	}
}
