// SPDX-License-Identifier: Apache-2.0

//go:build muster_failpoints

package coordinator

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// FailpointsDirEnv names the directory a test-only build reads its failpoints from. Only a
// binary built with -tags muster_failpoints reads it; a release build has no such code.
const FailpointsDirEnv = "MUSTER_FAILPOINTS_DIR"

// ClockStepFile, in the failpoints directory, holds a Go duration ("90s", "-2m") added to every
// reading of the member's wall clock: a stepped clock, as NTP or an operator would step it.
const ClockStepFile = "clock-step"

// failpointClockStep is the wall clock step the failpoint file asks for; 0 when there is none or
// it cannot be parsed (a failpoint must never stop a member).
func failpointClockStep() time.Duration {
	dir := os.Getenv(FailpointsDirEnv)
	if dir == "" {
		return 0
	}
	b, err := os.ReadFile(filepath.Join(dir, ClockStepFile))
	if err != nil {
		return 0
	}
	d, err := time.ParseDuration(strings.TrimSpace(string(b)))
	if err != nil {
		return 0
	}
	return d
}
