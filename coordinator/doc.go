// SPDX-License-Identifier: Apache-2.0

// Package coordinator is one member of Muster's coordinator cluster: Service opens the replicated
// node ledger (ledger), starts the Raft node (raftnode) on it, runs the leader-only lease manager
// (lease) and the metrics, and exposes the Go methods the HTTP layer calls through the interface
// it declares (httpapi.Service). It is the one package that imports those layers (DESIGN.md).
package coordinator
