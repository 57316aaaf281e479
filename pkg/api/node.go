// SPDX-License-Identifier: Apache-2.0

package api

import (
	"encoding/json"
	"slices"
	"time"
)

// NodeState is where a node stands in the ledger.
type NodeState string

// Node states; see DESIGN.md "Ledger" for the transitions between them.
const (
	// StateWaiting means the node is registered and may be offered to an edge.
	StateWaiting NodeState = "waiting"
	// StateLeased means the node is held by one edge under a lease.
	StateLeased NodeState = "leased"
	// StateProvisioned means the node was configured and restarted.
	StateProvisioned NodeState = "provisioned"
	// StateDeferred means the helper asked to defer the node.
	StateDeferred NodeState = "deferred"
	// StateShutdown means the helper asked for the node to be shut down.
	StateShutdown NodeState = "shutdown"
	// StateAbandoned means the node failed the configured maximum number of attempts.
	StateAbandoned NodeState = "abandoned"
	// StateGone means an edge found the node out of provisioning mode with no result recorded
	// (api.OutcomeGone); discovery seeing it in provisioning mode again, at least
	// lease.reprovision_after after it was found gone, makes it wait.
	StateGone NodeState = "gone"
	// StateBanned is a node the operator banned: never offered to an edge until unbanned.
	StateBanned NodeState = "banned"
	// StateHeld is a node that waits for an operator's approve before it is offered to an edge
	// (cluster protocol 8): a hold policy or a second responder put it there (Node.Hold says why).
	StateHeld NodeState = "held"
)

// NodeStates lists every state in the order an operator reads them.
func NodeStates() []NodeState {
	return []NodeState{StateWaiting, StateLeased, StateProvisioned, StateDeferred, StateShutdown, StateAbandoned, StateGone, StateBanned, StateHeld}
}

// Valid reports whether s is one of the known states.
func (s NodeState) Valid() bool { return slices.Contains(NodeStates(), s) }

// Node is one node's record in the ledger.
type Node struct {
	Identity         string          `json:"identity"`
	Region           string          `json:"region"`
	State            NodeState       `json:"state"`
	Attempts         int             `json:"attempts"`
	LeaseID          string          `json:"lease_id,omitempty"`
	LeaseToken       uint64          `json:"lease_token,omitempty"`
	Edge             string          `json:"edge,omitempty"`
	InventoryVersion string          `json:"inventory_version,omitempty"`
	TargetVersion    string          `json:"target_version,omitempty"`
	LastError        string          `json:"last_error,omitempty"`
	Facts            json.RawMessage `json:"facts,omitempty"`
	DiscoveredAt     time.Time       `json:"discovered_at"`
	LeasedAt         time.Time       `json:"leased_at,omitzero"`
	FinishedAt       time.Time       `json:"finished_at,omitzero"`
	NotBefore        time.Time       `json:"not_before,omitzero"`
	History          []Transition    `json:"history,omitempty"`
	// Hold says why a held node waits for an approve, when and which edge saw it (also kept
	// while a held node is banned, which unban returns it to).
	Hold *Hold `json:"hold,omitempty"`
	// Stale is set when a member answered from its own copy of the ledger, without the leader.
	Stale *Staleness `json:"stale,omitempty"`
}

// Transition is one entry of a node's bounded history.
type Transition struct {
	At         time.Time `json:"at"`
	From       NodeState `json:"from,omitempty"`
	To         NodeState `json:"to"`
	Reason     string    `json:"reason,omitempty"`
	Edge       string    `json:"edge,omitempty"`
	LeaseID    string    `json:"lease_id,omitempty"`
	LeaseToken uint64    `json:"lease_token,omitempty"`
	Error      string    `json:"error,omitempty"`
}
