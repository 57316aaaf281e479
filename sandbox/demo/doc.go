// SPDX-License-Identifier: Apache-2.0

// Package demo is `make run`: it starts a sandbox lab in this process (real and emulated nodes,
// some on an older version, a few faulty), one standalone muster-edge as a child process with
// the sample helper, follows the edge's /metrics with progress bars until every node has
// reached the end its fault plan predicts, then prints a summary and the sandbox report.
// Stopping it stops the edge (SIGTERM, then SIGKILL) and the lab, and checks that no process it
// started is left.
package demo
