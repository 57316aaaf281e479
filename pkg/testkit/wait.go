// SPDX-License-Identifier: Apache-2.0

package testkit

import (
	"testing"
	"time"
)

// Condition is what WaitFor polls: a plain check, or one that also says what it saw last, for
// the failure message.
type Condition interface {
	func() bool | func() (bool, string)
}

// WaitFor polls cond until it holds, failing t if limit passes first.
func WaitFor[C Condition](t testing.TB, limit time.Duration, what string, cond C) {
	t.Helper()
	if ok, last := Poll(limit, cond); !ok {
		if last != "" {
			t.Fatalf("timed out after %s waiting for %s; last: %s", limit, what, last)
		}
		t.Fatalf("timed out after %s waiting for %s", limit, what)
	}
}

// Poll is WaitFor for a goroutine other than the test's, which must not call t.Fatal: it
// reports whether cond held within limit, and what cond said last. It polls every 10ms at
// first and backs off to every 100ms, so a condition that calls a process or starts one is not
// run in a tight loop.
func Poll[C Condition](limit time.Duration, cond C) (ok bool, last string) {
	check := func() (bool, string) {
		switch c := any(cond).(type) {
		case func() bool:
			return c(), ""
		case func() (bool, string):
			return c()
		}
		panic("testkit: a condition of a type Condition does not admit")
	}
	deadline := time.Now().Add(limit)
	interval := 10 * time.Millisecond
	for {
		if ok, last = check(); ok {
			return true, ""
		}
		if time.Now().After(deadline) {
			return false, last
		}
		time.Sleep(interval) // polling interval, not a wait for an effect
		interval = min(2*interval, 100*time.Millisecond)
	}
}

// Receive returns the first value sent on ch, failing t if limit passes first: the answer of a
// call a test runs in another goroutine, such as one it has just cancelled.
func Receive[T any](t testing.TB, ch <-chan T, limit time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(limit):
		t.Fatalf("timed out after %s waiting for %s", limit, what)
	}
	var zero T
	return zero
}
