// SPDX-License-Identifier: Apache-2.0

package helper_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/metrics"
	"github.com/seed96588659/muster/pkg/testkit"
)

// buildDir holds the sample helper, built once for the whole test binary.
var sample struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sample.dir != "" {
		os.RemoveAll(sample.dir)
	}
	os.Exit(code)
}

// sampleHelper builds cmd/muster-helper-sample and returns its path.
func sampleHelper(tb testing.TB) string {
	tb.Helper()
	sample.once.Do(func() {
		sample.dir, sample.err = os.MkdirTemp("", "helper-sample-")
		if sample.err != nil {
			return
		}
		sample.path = filepath.Join(sample.dir, "muster-helper-sample")
		out, err := exec.Command("go", "build", "-o", sample.path, "../cmd/muster-helper-sample").CombinedOutput()
		if err != nil {
			sample.err = fmt.Errorf("build sample helper: %v\n%s", err, out)
		}
	})
	if sample.err != nil {
		tb.Fatal(sample.err)
	}
	return sample.path
}

// script writes an executable sh script into dir and returns its path.
func script(tb testing.TB, dir, name, body string) string {
	tb.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		tb.Fatal(err)
	}
	return path
}

// helperRuns is how many runs HelperTime observed for site.
func helperRuns(t *testing.T, reg *metrics.Registry, site string) uint64 {
	t.Helper()
	families, err := reg.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "choria_provisioner_helper_time" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "site" && l.GetValue() == site {
					return m.GetSummary().GetSampleCount()
				}
			}
		}
	}
	return 0
}

// gone reports whether pid has exited (no such process, or a zombie nobody reaped yet).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// the state follows the parenthesised command name
	i := bytes.LastIndexByte(stat, ')')
	return i > 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// waitGone waits until pid has exited; a killed process may take a moment to be torn down.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	testkit.WaitFor(t, 30*time.Second, fmt.Sprintf("process %d to exit", pid), func() bool { return gone(pid) })
}

// readPID reads a pid a helper wrote into path.
func readPID(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("helper wrote no pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("pid file %s: %v", path, err)
	}
	return pid
}

// waitFile waits until path exists and contains want.
func waitFile(t *testing.T, path, want string) {
	t.Helper()
	testkit.WaitFor(t, 30*time.Second, fmt.Sprintf("%s to contain %q", path, want), func() (bool, string) {
		data, _ := os.ReadFile(path)
		return strings.Contains(string(data), want), fmt.Sprintf("has %q", data)
	})
}

// waitLog waits until the log holds want.
func waitLog(t *testing.T, log *testkit.LogBuffer, want string) {
	t.Helper()
	testkit.WaitFor(t, 30*time.Second, fmt.Sprintf("the log to say %q", want), func() (bool, string) {
		return log.Contains(want), log.String()
	})
}

// writeFile writes data to path.
func writeFile(tb testing.TB, path, data string) {
	tb.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		tb.Fatal(err)
	}
}
