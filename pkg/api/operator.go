// SPDX-License-Identifier: Apache-2.0

package api

import (
	"errors"
	"fmt"
	"slices"
)

// PathOperator is the admin write of the operator's verbs on named nodes.
const PathOperator = "/v1/admin/operator"

// Operator verbs (OperatorRequest.Verb).
const (
	VerbForget = "forget" // a decommissioned server leaves the ledger
	VerbBan    = "ban"    // never offered to an edge until unbanned
	VerbUnban  = "unban"  // back to the state it had when banned (cluster protocol 7)
	VerbMove   = "move"   // changes region: the only way a node does
)

// Verbs lists the operator verbs.
func Verbs() []string { return []string{VerbForget, VerbBan, VerbUnban, VerbMove} }

// OperatorRequest applies Verb to the named nodes; move takes them to Region. By names the admin
// who asks (kept in each node's history, the audit index and the events): the member that
// authenticated the request sets it, replacing whatever a client sent. Reason says why.
type OperatorRequest struct {
	Verb   string   `json:"verb"`
	Nodes  []string `json:"nodes"`
	Region string   `json:"region,omitempty"`
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
	if r.Verb == VerbMove {
		if err := ValidateName("region", r.Region); err != nil {
			return err
		}
	} else if r.Region != "" {
		return fmt.Errorf("region: only %s takes one", VerbMove)
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
