// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"encoding/json"
	"time"
)

// State is where a node stands in the ledger.
type State string

// Node states; the transitions between them are listed in DESIGN.md.
const (
	StateWaiting     State = "waiting"
	StateLeased      State = "leased"
	StateProvisioned State = "provisioned"
	StateDeferred    State = "deferred"
	StateShutdown    State = "shutdown"
	StateAbandoned   State = "abandoned"
)

// States lists every state in the order an operator reads them.
func States() []State {
	return []State{StateWaiting, StateLeased, StateProvisioned, StateDeferred, StateShutdown, StateAbandoned}
}

// Valid reports whether s is a known state.
func (s State) Valid() bool {
	switch s {
	case StateWaiting, StateLeased, StateProvisioned, StateDeferred, StateShutdown, StateAbandoned:
		return true
	}
	return false
}

// Node is one node's record.
type Node struct {
	Identity         string          `json:"identity"`
	Region           string          `json:"region"`
	State            State           `json:"state"`
	Attempts         int             `json:"attempts"`
	LeaseID          string          `json:"lease_id,omitempty"`
	LeaseToken       uint64          `json:"lease_token,omitempty"`
	Edge             string          `json:"edge,omitempty"`
	InventoryVersion string          `json:"inventory_version,omitempty"`
	TargetVersion    string          `json:"target_version,omitempty"`
	LastError        string          `json:"last_error,omitempty"`
	Facts            json.RawMessage `json:"facts,omitempty"`
	DiscoveredAt     time.Time       `json:"discovered_at"`
	LastSeenAt       time.Time       `json:"last_seen_at"`
	LeasedAt         time.Time       `json:"leased_at,omitzero"`
	FinishedAt       time.Time       `json:"finished_at,omitzero"`
	// NotBefore is when the node may next be offered to any edge (backoff).
	NotBefore time.Time `json:"not_before,omitzero"`
	// LockEdge and LockUntil mirror go-choria's provisioning lock: until LockUntil only LockEdge
	// may be offered the node, because the node itself would refuse anyone else.
	LockEdge  string       `json:"lock_edge,omitempty"`
	LockUntil time.Time    `json:"lock_until,omitzero"`
	History   []Transition `json:"history,omitempty"`
}

// Transition is one entry of a node's bounded history.
type Transition struct {
	At         time.Time `json:"at"`
	From       State     `json:"from,omitempty"`
	To         State     `json:"to"`
	Reason     string    `json:"reason,omitempty"`
	Edge       string    `json:"edge,omitempty"`
	LeaseID    string    `json:"lease_id,omitempty"`
	LeaseToken uint64    `json:"lease_token,omitempty"`
	Error      string    `json:"error,omitempty"`
}

// Lease is a batch of nodes of one region held by one edge until ExpiresAt.
type Lease struct {
	ID        string        `json:"id"`
	Edge      string        `json:"edge"`
	Region    string        `json:"region"`
	Nodes     []string      `json:"nodes"`
	Token     uint64        `json:"token"`
	GrantedAt time.Time     `json:"granted_at"`
	RenewedAt time.Time     `json:"renewed_at"`
	ExpiresAt time.Time     `json:"expires_at"`
	TTL       time.Duration `json:"ttl"`
}

// Policy is the retry policy the leader stamps into each command that moves nodes, so every member
// applies the same rule even while their configuration files differ during a rolling change.
type Policy struct {
	MaxAttempts      int           `json:"max_attempts"`
	BackoffBase      time.Duration `json:"backoff_base"`
	BackoffMax       time.Duration `json:"backoff_max"`
	LockWindow       time.Duration `json:"lock_window"`
	HistoryLimit     int           `json:"history_limit"`
	ReprovisionAfter time.Duration `json:"reprovision_after"`
}

// DefaultPolicy returns the policy used when the operator configures none.
func DefaultPolicy() Policy {
	return Policy{
		MaxAttempts:      5,
		BackoffBase:      5 * time.Second,
		BackoffMax:       5 * time.Minute,
		LockWindow:       2 * time.Minute,
		HistoryLimit:     20,
		ReprovisionAfter: 30 * time.Second,
	}
}

// Validate refuses a policy that would make the ledger misbehave.
func (p Policy) Validate() error {
	switch {
	case p.MaxAttempts < 1:
		return errorf("policy max_attempts %d: must be at least 1", p.MaxAttempts)
	case p.BackoffBase < 0 || p.BackoffMax < p.BackoffBase:
		return errorf("policy backoff %s..%s: need 0 <= base <= max", p.BackoffBase, p.BackoffMax)
	case p.LockWindow < 0:
		return errorf("policy lock_window %s: must not be negative", p.LockWindow)
	case p.HistoryLimit < 1:
		return errorf("policy history_limit %d: must be at least 1", p.HistoryLimit)
	case p.ReprovisionAfter < 0:
		return errorf("policy reprovision_after %s: must not be negative", p.ReprovisionAfter)
	}
	return nil
}

// backoff is the delay before attempt number attempts+1; exponential, capped, and free of jitter
// because the FSM must be deterministic.
func (p Policy) backoff(attempts int) time.Duration {
	d := p.BackoffBase
	for i := 1; i < attempts && d < p.BackoffMax; i++ {
		d *= 2
	}
	return min(d, p.BackoffMax)
}

// transition moves n to state to and records it in the bounded history.
func (n *Node) transition(to State, t Transition, limit int) {
	t.From = n.State
	t.To = to
	n.State = to
	n.History = append(n.History, t)
	if over := len(n.History) - limit; over > 0 {
		n.History = append(n.History[:0], n.History[over:]...)
	}
}
