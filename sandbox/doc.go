// SPDX-License-Identifier: Apache-2.0

// Package sandbox holds a local Choria fleet for Muster's tests, benchmarks and `make run`, in
// three parts:
//
//   - fleet/: what Muster provisions. fleet/lab starts, per region, an embedded provisioning
//     broker (fleet/broker, with a throwaway CA and JWT signer from fleet/pki), real go-choria
//     servers in provisioning mode, each its own process from its own binary copy
//     (fleet/realnode, run by the hidden `muster-sandbox node` command), and emulated nodes
//     (fleet/emulated, misbehaving as fleet/faults says). Every action a node receives is
//     appended to DIR/actions.jsonl (fleet/recorder) and audited by fleet/audit; fleet/updates
//     serves the newer node binary for release_update.
//   - stack/: Muster's own processes on top of the fleet: coordinator members (stack/coordproc)
//     and each region's edge configuration file (stack/edgefile).
//   - the drivers and suites that use both: rpcsuite, edgesuite, clustersuite, chaos, sim, demo
//     (`make run`), edgebench, regionbench, browsersuite, deploysuite, upgradesuite, and
//     cmd/muster-sandbox, the command line; labkit is what the end-to-end suites share about the
//     lab, and internal/ holds low-level helpers that import neither fleet/ nor stack/.
//
// The release tools (the packages and the bench report) are the tools module's, not the lab's.
package sandbox
