// SPDX-License-Identifier: Apache-2.0

// Package edge provisions the nodes of one region. The path of one node reads from the files:
// sweeping.go runs the finder (discovery/: sweeps and startup events) and registers what it found
// (register/) with the lease source (lease/), a node it has not seen answer before only once it
// answered newnodes.go's one short check, within bounds per sweep and per second;
// dispatch.go acquires leases on batches of waiting nodes (window.go sizes the look-ahead) and runs
// the host flow (hostflow/) for each with bounded concurrency, every host under leasepause.go's
// pause source, which reads true once the operator paused, the edge no longer leads its leader
// election (leadership.go), or its lease is no longer valid by the edge's own clock; confirm.go
// settles restarts whose reply was lost by rediscovery; result.go batches every result per lease
// and carry.go lets the next acquire carry it back to the source.
// mode.go names the two configurations: Standalone (the edge is its own queue) and Cluster (the
// coordinators are, and take reports with acquires).
//
// A result flows one way and each stage owns what it holds: a host's result goes over a channel
// to the reporter (result.go), which owns the confirmer and the batches per lease
// (lease.Batches); a due batch goes into the outbox (carry.go), which owns the parked reports
// (lease.Outbox, under its lock) and every report in flight. The dispatcher only takes from the
// outbox for its next acquire and hands the answers to it; whoever got an answer settles it in
// the outbox (journal, metrics, the lease's count of results not settled: lease.Held.Settled),
// and nothing goes back to the reporter. The rules (when a batch is due, what an acquire
// carries, when a lease is renewed) are plain types in lease/, which the simulator's edges
// (sandbox/sim) drive too.
package edge
