// SPDX-License-Identifier: Apache-2.0

//go:build !muster_failpoints

package coordinator

import (
	"time"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/coordinator/raftnode"
)

// failpointClockStep is always 0 in a release build: the clock-step failpoint exists only in
// binaries built with -tags muster_failpoints (see failpoint_on.go).
func failpointClockStep() time.Duration { return 0 }

// traceFSM is fsm itself in a release build (failpoint_on.go traces every applied batch).
func traceFSM(fsm *ledger.FSM) raftnode.FSM { return fsm }
