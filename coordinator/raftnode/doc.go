// SPDX-License-Identifier: Apache-2.0

// Package raftnode runs one coordinator member's Raft: TCP transport, raft-boltdb log and stable
// store, file snapshots, the ledger as FSM, membership changes and leadership observation.
package raftnode
