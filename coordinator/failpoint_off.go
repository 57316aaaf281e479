// SPDX-License-Identifier: Apache-2.0

//go:build !muster_failpoints

package coordinator

import "time"

// failpointClockStep is always 0 in a release build: the clock-step failpoint exists only in
// binaries built with -tags muster_failpoints (see failpoint_on.go).
func failpointClockStep() time.Duration { return 0 }
