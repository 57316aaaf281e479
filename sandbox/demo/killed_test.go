// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/testkit"
)

// `muster-sandbox run` killed with SIGKILL runs no cleanup of its own: everything it started
// must die with it all the same (the kernel's parent-death signal). Real nodes that go-choria
// had re-executed after provisioning used to outlive it.
func TestRun_KilledWithSIGKILLLeavesNoProcess(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	out := &testkit.LogBuffer{}
	cmd := exec.Command(nodeBinary, "run", "--dir", dir, "--bin", bins, "--real", "1", "--emulated", "20", "--no-tty", "--timeout", "3m")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	testkit.WaitFor(t, 4*time.Minute, "the run's summary (every real node provisioned and re-executed)", func() bool {
		select {
		case err := <-exited:
			t.Fatalf("run exited before its summary: %v\n%s", err, out)
		default:
		}
		return strings.Contains(out.String(), "== done")
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	exited <- nil // for the cleanup
	deadline := time.Now().Add(30 * time.Second)
	for left := leftovers(nil, dir); len(left) > 0; left = leftovers(nil, dir) {
		if time.Now().After(deadline) {
			for _, p := range left {
				_ = syscall.Kill(p.PID, syscall.SIGKILL)
			}
			t.Fatalf("30s after the run was killed these still ran (now killed): %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
