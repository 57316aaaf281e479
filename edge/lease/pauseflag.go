// SPDX-License-Identifier: Apache-2.0

package lease

import "github.com/seed96588659/muster/pkg/api"

// PauseFlag is the coordinators' pause as an edge learns it from its answers. Answers to
// concurrent calls (renewals of several leases, an acquire, a heartbeat) arrive in any order, so
// a flag read before the one held is dropped: else a renewal answered before the operator's
// pause, arriving after a heartbeat that carried it, would resume the edge in the middle of the
// pause. api.PauseMark orders them, across a recover too. Plain data: the caller keeps it under
// its own lock.
type PauseFlag struct {
	paused bool
	at     api.PauseMark
}

// Take records flag p read at at. It reports whether the flag was taken (not older than the one
// held) and whether that changed it.
func (f *PauseFlag) Take(p bool, at api.PauseMark) (taken, changed bool) {
	if at.Older(f.at) {
		return false, false
	}
	f.at = at.Taken(f.at)
	changed, f.paused = f.paused != p, p
	return true, changed
}

// Paused is the flag held.
func (f *PauseFlag) Paused() bool { return f.paused }

// At is where in the coordinators' log the flag held was read.
func (f *PauseFlag) At() api.PauseMark { return f.at }
