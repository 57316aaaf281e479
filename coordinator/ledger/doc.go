// SPDX-License-Identifier: Apache-2.0

// Package ledger holds the coordinator's replicated node ledger: the Raft FSM that stores every
// node, lease and the operator pause flag in one bbolt file. See DESIGN.md in this directory.
package ledger
