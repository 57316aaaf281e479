// SPDX-License-Identifier: Apache-2.0

// Package edge provisions the nodes of one region. The path of one node reads from the files:
// sweeping.go runs the finder (discovery/: sweeps and startup events) and registers what it found
// (register/) with the lease source (lease/), a node it has not seen answer before only once it
// answered newnodes.go's one short check, within bounds per sweep and per second;
// dispatch.go acquires leases on batches of waiting nodes (window.go sizes the look-ahead) and runs
// the host flow (hostflow/) for each with bounded concurrency, every host under leasepause.go's
// pause source, which reads true once the operator paused or its lease is no longer valid by the
// edge's own clock; confirm.go settles restarts whose reply was lost by rediscovery; result.go
// batches every result per lease and carry.go lets the next acquire carry it back to the source.
package edge
