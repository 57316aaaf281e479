// SPDX-License-Identifier: Apache-2.0

// Package regionbench measures Muster at the size of a fleet spread over datacenters: ten
// regions of 10,000 emulated nodes each (MUSTER_BENCH_NODES per region), one in-process edge per
// region, against three muster-coordinator processes (fsync on, as in production) placed in
// three datacenters by the 3dc profile (sandbox/stack/wan: members 20, 40 and 80 ms apart, each
// edge next to one of them). The same lab size is provisioned three times in one run: by ten
// standalone edges (the baseline: the cluster must never be the bottleneck), by the cluster,
// and by the cluster with its leader SIGKILLed halfway. Every run fails unless the lab's action
// log shows every node provisioned and none provisioned twice.
//
// Figures: nodes/min of the whole fleet (from the edges' start to the last node provisioned),
// the cluster's share of the standalone rate, coordinator CPU per node (all members, and the
// leader alone), the leader's peak RSS, grant and report latency p50/p99 as the edges see them,
// and the stall after the kill (SIGKILL to the next lease granted). CPU profiles of every member
// over the middle of the cluster run are written where MUSTER_BENCH_PROFILE names, the followers'
// with their id in the name (default: the benchmark's temporary directory, printed), and the
// fleet's own CPU per node is reported for both runs. MUSTER_BENCH_PLACEMENT (placement.go) gives
// the members CPUs of their own ("split", the default) or shares every CPU ("shared").
// MUSTER_BENCH_PAIRS runs the standalone and cluster runs that many times, alternated, and
// reports the pair of the median ratio: one pair is at the mercy of the machine's drift.
// MUSTER_BENCH_MEMBER_ENV adds KEY=VALUE words to every member's environment (GOGC=100, say),
// to compare a runtime or MUSTER_ setting without a build of its own.
package regionbench
