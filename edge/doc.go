// SPDX-License-Identifier: Apache-2.0

// Package edge provisions the nodes of one region. The path of one node reads from the files:
// discover.go finds it (sweeps and startup events) and registers it with the lease source, a
// node it has not seen answer before only once it answered newnodes.go's one short check, within
// bounds per sweep and per second;
// dispatch.go acquires leases on batches of waiting nodes and runs the host flow (hostflow/) for
// each with bounded concurrency, every host under a pause source that reads true once the
// operator paused or its lease is no longer valid by the edge's own clock; confirm.go settles
// restarts whose reply was lost by rediscovery; result.go hands every result back to the source.
package edge
