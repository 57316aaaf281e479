// SPDX-License-Identifier: Apache-2.0

// Package coordinator is one member of Muster's coordinator cluster: Service ties the Raft node
// (raftnode), the replicated node ledger (ledger), the leader-only lease manager (lease) and the
// metrics together and exposes the Go methods the HTTP layer (httpapi) calls.
package coordinator
