// SPDX-License-Identifier: Apache-2.0

// Package chaos runs the end-to-end chaos suite: three real coordinator processes (built with
// the test-only clock-step failpoint), real edge processes in two regions (two in the first),
// a lab with real and emulated nodes, TCP proxies in front of every Raft port and every edge's
// view of the coordinators, and fault injectors (SIGKILL, SIGSTOP, partitions, clock steps,
// broker and cluster restarts, operator pause). After every round a checker reads the lab's
// action log, the ledger and the fleet's own record; a summary table closes the run.
package chaos
