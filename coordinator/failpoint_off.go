// SPDX-License-Identifier: Apache-2.0

//go:build !muster_failpoints

package coordinator

import (
	"log/slog"
	"time"

	"github.com/hashicorp/raft"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/coordinator/raftnode"
)

// failpointClockStep is always 0 in a release build: the clock-step failpoint exists only in
// binaries built with -tags muster_failpoints (see failpoint_on.go).
func failpointClockStep() time.Duration { return 0 }

// traceFSM is fsm itself in a release build (failpoint_on.go traces every applied batch).
func traceFSM(fsm *ledger.FSM) raftnode.FSM { return fsm }

// checkLogs is nil in a release build: raft's log store is used as it is (failpoint_on.go
// checks every entry read against what was stored).
func checkLogs(*slog.Logger) func(raft.LogStore) raft.LogStore { return nil }
