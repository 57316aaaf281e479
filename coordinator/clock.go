// SPDX-License-Identifier: Apache-2.0

package coordinator

import "time"

// Clock is the leader's source of the times it stamps into commands.
type Clock interface{ Now() time.Time }

type systemClock struct{}

// Now is the wall clock in UTC, without a monotonic reading (it travels in commands).
func (systemClock) Now() time.Time { return time.Now().UTC().Round(0) }
