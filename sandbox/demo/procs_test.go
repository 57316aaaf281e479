// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/testkit"
)

func TestLeftovers_FindsAProcessNamingTheDir(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	dir := t.TempDir()
	// A shell waiting on a pipe we hold: dir is in its arguments and it has no child of its own.
	cmd := exec.Command("sh", "-c", "read line", dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	// Start returns once the child's exec has passed its point of no return, which is before the
	// kernel has laid out the new program's arguments: until then /proc/PID/cmdline reads empty.
	testkit.WaitFor(t, 10*time.Second, "the shell's command line to name dir", func() (bool, string) {
		c := cmdline(pid)
		return strings.Contains(c, dir), c
	})
	left := leftovers(nil, dir)
	if len(left) != 1 || left[0].PID != pid {
		t.Errorf("leftovers %v, want pid %d", left, pid)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if left := leftovers([]int{pid}, dir); len(left) != 0 {
		t.Errorf("leftovers after kill: %v", left)
	}
	if alive(pid) {
		t.Errorf("pid %d alive after kill and wait", pid)
	}
}
