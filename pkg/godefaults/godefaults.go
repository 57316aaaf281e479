// SPDX-License-Identifier: Apache-2.0

// Package godefaults holds the Go runtime settings a Muster program takes as its own defaults:
// each applies only while the environment leaves Go's variable unset, so GOMEMLIMIT and GOGC stay
// the operator's to choose.
package godefaults

import "runtime/debug"

// Defaults are one program's runtime defaults; a zero field leaves Go's own.
type Defaults struct {
	// MemoryLimit is the soft memory limit in bytes, unless GOMEMLIMIT is set.
	MemoryLimit int64
	// GCPercent is the collector's target percentage, unless GOGC is set.
	GCPercent int
}

// Apply sets every default whose variable getenv (os.Getenv) reports unset.
func (d Defaults) Apply(getenv func(string) string) {
	if d.MemoryLimit > 0 && getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(d.MemoryLimit)
	}
	if d.GCPercent > 0 && getenv("GOGC") == "" {
		debug.SetGCPercent(d.GCPercent)
	}
}
