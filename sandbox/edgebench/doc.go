// SPDX-License-Identifier: Apache-2.0

// Package edgebench holds the edge's speed benchmarks: muster-edge and, when
// MUSTER_CHORIA_PROVISIONER_BIN names its binary, the unmodified choria-provisioner, each run as
// a separate process against a fresh in-process sandbox lab of emulated nodes, with the flow
// jwt + inventory + helper + configure + restart.
//
// Every run reports, from the lab's actions.jsonl and the provisioner's /proc entry:
//
//   - nodes/min: nodes provisioned over the time from the first to the last successful restart;
//   - wall-s: seconds from the provisioner's start to the last node's successful restart;
//   - cpu-ms/node: the provisioner's own user+system CPU (helper children excluded) per node;
//   - helper-cpu-ms/node: CPU of the helper processes it forked and reaped, per node;
//   - rss-MB: the provisioner's peak resident set (VmHWM).
//
// A run fails unless every node was provisioned exactly once (one successful configure and one
// successful restart each) and the lab's report finds no double provisioning.
//
// The binaries come from the repository's bin/ (make build), or MUSTER_BIN_DIR. The benchmarks
// start labs of up to 10,000 nodes and take minutes; they only run with -bench (make bench).
package edgebench
