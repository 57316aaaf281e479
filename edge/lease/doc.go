// SPDX-License-Identifier: Apache-2.0

// Package lease is where an edge gets the right to touch a node: a Source hands out leases on
// batches of discovered nodes and takes their results back. Local is the standalone source (one
// edge, no coordinator: it leases every discovered node of its region to itself and is the
// edge's work queue); a coordinator-backed source implements the same interface over pkg/api.
//
// Held tracks one lease on the edge's own monotonic clock: it is valid from when the acquire or
// renew that granted it was sent, plus the time the server says it held the request, plus the
// TTL, minus a safety margin. Every host of the lease reads as paused once that time has passed.
package lease
