// SPDX-License-Identifier: Apache-2.0

// Package upgradesuite holds the rolling upgrade test: three muster-coordinator processes and
// two muster-edge processes of the previous build (sandbox/stack/previous: the last commit at
// the cluster protocol before this build's), a lab region of emulated nodes behind an embedded
// go-choria broker, upgraded member by member, then edge by edge, to this build while they
// provision, and a member downgraded after the raise. The chaos suite's runner (sandbox/chaos)
// drives it with its checks: nothing provisioned twice, nothing lost, the edges' calls
// linearizable.
package upgradesuite
