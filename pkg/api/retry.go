// SPDX-License-Identifier: Apache-2.0

package api

import (
	"fmt"
	"slices"
	"time"
)

// Paths of the operator's retry and of the recent failures list (admin API).
const (
	PathRetry    = "/v1/admin/retry"
	PathFailures = "/v1/admin/failures"
)

// Limits of the retry and failures calls.
const (
	// MaxRetryNodes bounds the nodes one RetryRequest names or moves; a region with more is
	// retried by calling again (the answer says More).
	MaxRetryNodes = 10000
	// MaxFailures is how many recent failures the ledger keeps, and the most one call returns.
	MaxFailures = 500
	// DefaultFailures is how many recent failures a call returns when it names no limit.
	DefaultFailures = 50
)

// RetryableStates are the states an operator may send back to waiting at once: the final ones
// (abandoned, gone, deferred) and waiting, for a node that failed and waits for its backoff
// (from cluster protocol 3; one that never failed has nothing to retry). A leased node is never
// retried (a worker may be on it), nor a provisioned or shut down one (discovery requeues those
// when they enter provisioning mode again).
func RetryableStates() []NodeState {
	return []NodeState{StateAbandoned, StateGone, StateDeferred, StateWaiting}
}

// RetryRequest gives nodes another chance: either the named Nodes, or every node of Region in
// State (at most Limit of them). Each goes back to waiting with its attempts reset and no backoff.
type RetryRequest struct {
	Nodes  []string  `json:"nodes,omitempty"`
	Region string    `json:"region,omitempty"`
	State  NodeState `json:"state,omitempty"`
	// Limit caps a region's selection (MaxRetryNodes when 0).
	Limit int `json:"limit,omitempty"`
	// DryRun answers what would move and moves nothing.
	DryRun bool `json:"dry_run,omitempty"`
	// RequestID makes the retry idempotent: sent again (its answer lost), the nodes it moved are
	// answered as moved instead of refused as waiting. The client sets one per call.
	RequestID string `json:"request_id,omitempty"`
	// By is the admin who asks, for each node's history: the member that authenticated the
	// request sets it, replacing whatever a client sent.
	By string `json:"by,omitempty"`
}

// Validate checks that the request names nodes or a region and a retryable state, not both.
func (r *RetryRequest) Validate() error {
	switch {
	case len(r.Nodes) > 0 && (r.Region != "" || r.State != ""):
		return fmt.Errorf("retry: name nodes, or a region and a state, not both")
	case len(r.Nodes) == 0 && r.Region == "":
		return fmt.Errorf("retry: name nodes, or a region and a state")
	case len(r.Nodes) > MaxRetryNodes:
		return fmt.Errorf("nodes: %d nodes, more than %d in one retry", len(r.Nodes), MaxRetryNodes)
	case r.Limit < 0 || r.Limit > MaxRetryNodes:
		return fmt.Errorf("limit: %d is not in 0..%d", r.Limit, MaxRetryNodes)
	case len(r.Nodes) > 0 && r.Limit != 0:
		return fmt.Errorf("limit: applies to a region's selection, not to named nodes")
	}
	if r.RequestID != "" {
		if err := ValidateName("request_id", r.RequestID); err != nil {
			return err
		}
	}
	if r.By != "" {
		if err := ValidateName("by", r.By); err != nil {
			return err
		}
	}
	if len(r.Nodes) > 0 {
		seen := make(map[string]struct{}, len(r.Nodes))
		for i, id := range r.Nodes {
			if err := ValidateName(fmt.Sprintf("nodes[%d]", i), id); err != nil {
				return err
			}
			if _, dup := seen[id]; dup {
				return fmt.Errorf("nodes[%d]: %s is listed twice", i, id)
			}
			seen[id] = struct{}{}
		}
		return nil
	}
	if err := ValidateName("region", r.Region); err != nil {
		return err
	}
	if r.State == "" {
		return fmt.Errorf("state: a region's retry needs the state to select (%v)", RetryableStates())
	}
	if !slices.Contains(RetryableStates(), r.State) {
		return fmt.Errorf("state: %q is not a state a node is retried from (%v)", r.State, RetryableStates())
	}
	return nil
}

// RetriedNode is one node a retry moved (or, with DryRun, would move), as it was before.
type RetriedNode struct {
	Identity  string    `json:"identity"`
	Region    string    `json:"region"`
	From      NodeState `json:"from"`
	Attempts  int       `json:"attempts"`
	LastError string    `json:"last_error,omitempty"`
}

// SkippedNode is a selected node that changed before the retry reached it, and why it was left.
type SkippedNode struct {
	Identity string `json:"identity"`
	Reason   string `json:"reason"`
}

// RetryResponse lists the nodes moved back to waiting (with DryRun, those that would be).
type RetryResponse struct {
	DryRun bool          `json:"dry_run,omitempty"`
	Nodes  []RetriedNode `json:"nodes"`
	// Skipped nodes were selected but had left their state (discovery or a late result) by the
	// time the ledger applied the retry; nothing was done to them.
	Skipped []SkippedNode `json:"skipped,omitempty"`
	// More is true when the region holds more nodes in the state than the limit: call again.
	More bool `json:"more,omitempty"`
}

// Failure is one recent failure the ledger recorded: an attempt that failed (or whose lease
// expired, or whose node's lock was held by another worker), a node abandoned, or a node gone.
type Failure struct {
	At       time.Time `json:"at"`
	Identity string    `json:"identity"`
	Region   string    `json:"region"`
	Edge     string    `json:"edge,omitempty"`
	LeaseID  string    `json:"lease_id,omitempty"`
	// State is the node's state right after: waiting (to be retried), abandoned or gone.
	State    NodeState `json:"state"`
	Attempts int       `json:"attempts"`
	Reason   string    `json:"reason"`
	Error    string    `json:"error,omitempty"`
}

// FailuresResponse lists recent failures, newest first.
type FailuresResponse struct {
	Failures []Failure `json:"failures"`
	// Stale is set when a member answered from its own copy of the ledger, without the leader.
	Stale *Staleness `json:"stale,omitempty"`
}
