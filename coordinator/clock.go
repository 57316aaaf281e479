// SPDX-License-Identifier: Apache-2.0

package coordinator

import (
	"time"

	"github.com/seed96588659/muster/coordinator/lessor"
)

// Clock is a member's wall and monotonic readings; see lessor.Clock for which decides what.
type Clock = lessor.Clock

// systemClock is the process's own clock.
type systemClock struct{ start time.Time }

func newSystemClock() systemClock { return systemClock{start: time.Now()} }

// Now is the wall clock in UTC without its monotonic reading, since it travels in commands.
func (systemClock) Now() time.Time { return time.Now().UTC().Round(0).Add(failpointClockStep()) }

// Monotonic is the process's monotonic time since the clock was made.
func (c systemClock) Monotonic() time.Duration { return time.Since(c.start) }
