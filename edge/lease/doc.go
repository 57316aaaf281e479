// SPDX-License-Identifier: Apache-2.0

// Package lease is where an edge gets the right to touch a node: a Source hands out leases on
// batches of discovered nodes and takes their results back. Local is the standalone source (one
// edge, no coordinator: it leases every discovered node of its region to itself and is the
// edge's work queue); a coordinator-backed source implements the same interface over pkg/api.
//
// Held tracks one lease on the edge's own monotonic clock: it is valid from when the acquire or
// renew that granted it was sent, plus the time the server says it held the request, plus the
// TTL, minus a safety margin. Every host of the lease reads as paused once that time has passed.
// It also counts the lease's results not settled yet: the lease is renewed until none is left.
//
// The rules of what happens to results are plain data with the clock injected and no goroutines,
// so the edge and the simulator's edges (sandbox/sim) run the same code: Batches (a lease's
// results go together, by its last result, by age or by count), Outbox (what the next acquire
// carries, and what waited too long and goes alone), Answers and Reported (what an acquire's
// answers say of the reports it carried, and what the registration filter makes of it) and
// PauseFlag (the coordinators' pause from answers that arrive in any order).
package lease
