// SPDX-License-Identifier: Apache-2.0

// Package clustersuite holds the end-to-end tests of edges in cluster mode: three
// muster-coordinator processes (real raft over loopback, real bbolt), a lab with two regions,
// and in-process edges built by edge/app exactly as muster-edge builds them, each with its own
// lab client identity and an edge credential the coordinators bind to its name and region.
package clustersuite
