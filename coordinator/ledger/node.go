// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"encoding/json"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// Node is one node's record, the ledger's own type: the admin API shows it as api.Node, converted
// by the member (coordinator/convert.go), so the record and the wire can change apart. States are
// the API's, the one vocabulary of a node's life. The binary codec (codec.go) writes each field
// explicitly, so a field added here must be added there too (TestCodec_EveryFieldPersisted fails
// until it is).
type Node struct {
	Identity         string          `json:"identity"`
	Region           string          `json:"region"`
	State            api.NodeState   `json:"state"`
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
	// LockEdge and LockUntil mirror go-choria's provisioning lock: until LockUntil only LockEdge
	// may be offered the node, because the node itself would refuse anyone else.
	LockEdge  string    `json:"lock_edge,omitempty"`
	LockUntil time.Time `json:"lock_until,omitzero"`
	// PriorState is the state a banned node had when it was banned, which unban returns it to.
	PriorState api.NodeState `json:"prior_state,omitempty"`
	// HoldReason (one of api.HoldReasons), HeldAt, HoldEdge and HoldDetail say why a held node
	// waits for an approve; a ban keeps them, so unban returns the node to held with its reason.
	HoldReason string    `json:"hold_reason,omitempty"`
	HeldAt     time.Time `json:"held_at,omitzero"`
	HoldEdge   string    `json:"hold_edge,omitempty"`
	HoldDetail string    `json:"hold_detail,omitempty"`
}

// Transition is one entry of a node's bounded history.
type Transition struct {
	At         time.Time     `json:"at"`
	From       api.NodeState `json:"from,omitempty"`
	To         api.NodeState `json:"to"`
	Reason     string        `json:"reason,omitempty"`
	Edge       string        `json:"edge,omitempty"`
	LeaseID    string        `json:"lease_id,omitempty"`
	LeaseToken uint64        `json:"lease_token,omitempty"`
	Error      string        `json:"error,omitempty"`
	// FromRegion is the region a move took the node out of (only a move writes it).
	FromRegion string `json:"from_region,omitempty"`
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
	// Fenced are nodes taken out of the lease while it lived (a late result of an earlier lease
	// recorded them): its edge may still count them held, so they stay ineligible until the
	// lease ends on the leader's count (fence.go).
	Fenced []string `json:"fenced,omitempty"`
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
func (n *Node) transition(to api.NodeState, t Transition, limit int) {
	t.From = n.State
	t.To = to
	n.State = to
	n.History = append(n.History, t)
	if over := len(n.History) - limit; over > 0 {
		n.History = append(n.History[:0], n.History[over:]...)
	}
}
