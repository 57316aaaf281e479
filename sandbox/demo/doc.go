// SPDX-License-Identifier: Apache-2.0

// Package demo is `make run`: it starts a sandbox lab in this process (regions eu and us, real
// and emulated nodes, some on an older version, a few faulty), three muster-coordinator members
// and one cluster-mode muster-edge per region with the sample helper, all child processes with
// fresh tokens, and follows the edges' /metrics and the coordinators' status with progress bars
// until every node has reached the end its fault plan predicts (by the action log, the edges'
// counters and the ledger), then prints a summary and the sandbox report. Stopping it stops the
// edges, the coordinators (SIGTERM, then SIGKILL) and the lab, and checks that no process it
// started is left.
package demo
