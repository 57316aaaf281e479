// SPDX-License-Identifier: Apache-2.0

package testutil

import (
	"testing"
	"time"
)

// WaitFor polls cond until it holds, failing t if timeout passes first.
func WaitFor(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	WaitForState(t, what, timeout, func() (bool, string) { return cond(), "" })
}

// WaitForState is WaitFor for a condition that also says what it saw, for the failure message.
// It polls every 10ms at first and backs off to every 100ms, so a condition that starts a process
// is not run in a tight loop.
func WaitForState(t testing.TB, what string, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	interval := 10 * time.Millisecond
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			if state != "" {
				t.Fatalf("timed out after %s waiting for %s; last: %s", timeout, what, state)
			}
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(interval) // polling interval, not a wait for an effect
		interval = min(2*interval, 100*time.Millisecond)
	}
}
