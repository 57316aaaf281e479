// SPDX-License-Identifier: Apache-2.0

// Package plan shows what a run of the edge would do, acting on nothing: one discovery sweep,
// each node's rpcutil#inventory, the upgrade decision, optionally the site helper's answer, and
// in cluster mode the ledger's view of each node (`muster-edge plan`).
//
// The guarantee that a plan acts on nothing is held by types, not by care: a Planner reaches
// nodes only through a Reader, whose transport refuses every request but rpcutil#inventory
// (choria_provision's actions, jwt included, all take go-choria's per-node provisioning lock),
// and reaches the coordinators only through a Ledger, which has no call but the admin
// node listing. It is never given a lease source, a journal or a host flow.
package plan
