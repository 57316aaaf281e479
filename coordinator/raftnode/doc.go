// SPDX-License-Identifier: Apache-2.0

// Package raftnode runs one coordinator member's Raft: TCP transport, raft-boltdb log and stable
// store with the newest entries cached in memory (logstore.go), file snapshots, membership
// changes and leadership observation. It applies to an FSM it is given (the member gives it the
// ledger's) and knows nothing of what that FSM stores.
package raftnode
