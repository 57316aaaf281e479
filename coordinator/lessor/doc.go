// SPDX-License-Identifier: Apache-2.0

// Package lessor is the leader-only lease manager: it grants batches of waiting nodes to edges
// (long poll), renews leases, applies reported results and expires leases whose edge went quiet.
// It only proposes commands; the ledger decides, so a deposed leader can never grant anything.
package lessor
