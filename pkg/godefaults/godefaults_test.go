// SPDX-License-Identifier: Apache-2.0

package godefaults

import (
	"math"
	"runtime/debug"
	"slices"
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
	set := Defaults{MemoryLimit: 64 << 20, GCPercent: 400}.Apply(func(string) string { return "" })
	if want := []string{"GOMEMLIMIT=67108864", "GOGC=400"}; !slices.Equal(set, want) {
		t.Errorf("Apply named %v, want %v", set, want)
	}
	if limit, gc := current(); limit != 64<<20 || gc != 400 {
		t.Errorf("runtime has limit %d and GOGC %d, want %d and 400", limit, gc, 64<<20)
	}
}

func TestApply_LeavesTheOperatorsVariables(t *testing.T) {
	restore(t)
	debug.SetMemoryLimit(math.MaxInt64)
	debug.SetGCPercent(100)
	env := map[string]string{"GOMEMLIMIT": "1GiB", "GOGC": "50"}
	if set := (Defaults{MemoryLimit: 64 << 20, GCPercent: 400}).Apply(func(k string) string { return env[k] }); len(set) != 0 {
		t.Errorf("Apply set %v over the environment's variables", set)
	}
	if limit, gc := current(); limit != math.MaxInt64 || gc != 100 {
		t.Errorf("runtime has limit %d and GOGC %d: Apply changed what the environment names", limit, gc)
	}
	// A zero field is Go's own default, whatever the environment says.
	if set := (Defaults{}).Apply(func(string) string { return "" }); len(set) != 0 {
		t.Errorf("zero Defaults set %v", set)
	}
}
