// SPDX-License-Identifier: Apache-2.0

package api

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// PathOperator is the admin write of the operator's verbs on named nodes.
const PathOperator = "/v1/admin/operator"

// Operator verbs (OperatorRequest.Verb).
const (
	VerbForget = "forget" // a decommissioned server leaves the ledger
	VerbBan    = "ban"    // never offered to an edge until unbanned
	VerbUnban  = "unban"  // back to the state it had when banned (cluster protocol 7)
	VerbMove   = "move"   // changes region: the only way a node does
	// VerbApprove sends held nodes to waiting, eligible again (cluster protocol 8).
	VerbApprove = "approve"
)

// Verbs lists the operator verbs.
func Verbs() []string { return []string{VerbForget, VerbBan, VerbUnban, VerbMove, VerbApprove} }

// OperatorRequest applies Verb to the named nodes; move takes them to Region. By names the admin
// who asks (kept in each node's history, the audit index and the events): the member that
// authenticated the request sets it, replacing whatever a client sent. Reason says why. An
// approve with All and Region (and no nodes) approves every node held in Region, and needs a
// Reason.
type OperatorRequest struct {
	Verb   string   `json:"verb"`
	Nodes  []string `json:"nodes,omitempty"`
	Region string   `json:"region,omitempty"`
	All    bool     `json:"all,omitempty"`
	By     string   `json:"by,omitempty"`
	Reason string   `json:"reason,omitempty"`
}

// OperatorResponse names the nodes acted on and those refused, with why (a lease holds or fences
// the node, it is unknown, the verb changes nothing).
type OperatorResponse struct {
	Done     []string         `json:"done"`
	Rejected []RejectedResult `json:"rejected,omitempty"`
}

// Validate checks an operator request.
func (r *OperatorRequest) Validate() error {
	if !slices.Contains(Verbs(), r.Verb) {
		return fmt.Errorf("verb: %q is not one of %v", r.Verb, Verbs())
	}
	if r.By != "" {
		if err := ValidateName("by", r.By); err != nil {
			return err
		}
	}
	if r.All {
		return r.validateAll()
	}
	if r.Verb == VerbMove {
		if err := ValidateName("region", r.Region); err != nil {
			return err
		}
	} else if r.Region != "" {
		return fmt.Errorf("region: only %s and %s --all take one", VerbMove, VerbApprove)
	}
	if len(r.Nodes) == 0 {
		return errors.New("nodes: must name at least one node")
	}
	if len(r.Nodes) > MaxRetryNodes {
		return fmt.Errorf("nodes: %d nodes, more than %d in one request", len(r.Nodes), MaxRetryNodes)
	}
	seen := make(map[string]int, len(r.Nodes))
	for i, id := range r.Nodes {
		if err := ValidateName(fmt.Sprintf("nodes[%d]", i), id); err != nil {
			return err
		}
		if j, dup := seen[id]; dup {
			return fmt.Errorf("nodes[%d]: %q repeats nodes[%d]", i, id, j)
		}
		seen[id] = i
	}
	return validateText("reason", r.Reason, MaxPauseReason)
}

// validateAll checks an approve of every held node of a region.
func (r *OperatorRequest) validateAll() error {
	switch {
	case r.Verb != VerbApprove:
		return fmt.Errorf("all: only %s takes it, not %s", VerbApprove, r.Verb)
	case len(r.Nodes) > 0:
		return errors.New("all: approves every held node of the region; name no node beside it")
	case r.Region == "":
		return errors.New("region: approve --all needs the region whose held nodes it approves")
	case strings.TrimSpace(r.Reason) == "":
		return errors.New("reason: approve --all needs a reason for the audit")
	}
	if err := ValidateName("region", r.Region); err != nil {
		return err
	}
	return validateText("reason", r.Reason, MaxPauseReason)
}
