// SPDX-License-Identifier: Apache-2.0

package testkit

import (
	"syscall"
	"testing"
	"time"
)

// SelfCPU is the user+system CPU this process has used so far (getrusage), for benchmarks that
// report CPU per unit of work; it fails tb if the kernel does not answer.
func SelfCPU(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
