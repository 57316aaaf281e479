// SPDX-License-Identifier: Apache-2.0

// Package edgecalls holds the rules of the calls an edge makes on the cluster's leader: register
// (with the pre-check that refuses bad nodes by name), acquire (with the reports it carries),
// renew, report and heartbeat, and the conversions between the wire's types and the ledger's.
//
// It has no goroutines, no HTTP and no clock of its own: what only a member of the cluster can
// do (lead, stamp, propose, confirm its leadership with a quorum) comes through Member.
// coordinator.Service implements Member over Raft and the simulator (sandbox/sim) over its
// simulated Raft, so every seed checks these rules, not a copy of them.
package edgecalls
