// SPDX-License-Identifier: Apache-2.0

package godefaults

import (
	"math"
	"runtime/debug"
	"testing"
)

// current reads the runtime's settings back (each setter returns the previous value).
func current() (limit int64, gc int) {
	limit = debug.SetMemoryLimit(-1)
	gc = debug.SetGCPercent(100)
	debug.SetGCPercent(gc)
	return limit, gc
}

func restore(t *testing.T) {
	limit, gc := current()
	t.Cleanup(func() {
		debug.SetMemoryLimit(limit)
		debug.SetGCPercent(gc)
	})
}

func TestApply_SetsWhatTheEnvironmentLeavesUnset(t *testing.T) {
	restore(t)
	debug.SetMemoryLimit(math.MaxInt64)
	debug.SetGCPercent(100)
	Defaults{MemoryLimit: 64 << 20, GCPercent: 400}.Apply(func(string) string { return "" })
	if limit, gc := current(); limit != 64<<20 || gc != 400 {
		t.Errorf("runtime has limit %d and GOGC %d, want %d and 400", limit, gc, 64<<20)
	}
}

func TestApply_LeavesTheOperatorsVariables(t *testing.T) {
	restore(t)
	debug.SetMemoryLimit(math.MaxInt64)
	debug.SetGCPercent(100)
	env := map[string]string{"GOMEMLIMIT": "1GiB", "GOGC": "50"}
	Defaults{MemoryLimit: 64 << 20, GCPercent: 400}.Apply(func(k string) string { return env[k] })
	if limit, gc := current(); limit != math.MaxInt64 || gc != 100 {
		t.Errorf("runtime has limit %d and GOGC %d: Apply changed what the environment names", limit, gc)
	}
	// A zero field leaves Go's own setting, whatever the environment says.
	Defaults{}.Apply(func(string) string { return "" })
	if limit, gc := current(); limit != math.MaxInt64 || gc != 100 {
		t.Errorf("zero Defaults changed the runtime: limit %d, GOGC %d", limit, gc)
	}
}
