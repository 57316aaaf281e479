// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// Approval is the hold policy the leader stamps into each registration (the coordinator's
// approval.* keys), so every member holds the same nodes whatever its own configuration says.
// The zero value holds nothing: today's behaviour.
type Approval struct {
	// Manual lists the regions (or "*") whose first-seen nodes are held.
	Manual []string `json:"manual,omitempty"`
	// ReprovisionHold holds a provisioned identity that comes back in provisioning mode.
	ReprovisionHold bool `json:"reprovision_hold,omitempty"`
	// FlapCount and FlapWindow hold an identity that re-enters provisioning mode FlapCount times
	// within FlapWindow; 0 holds none.
	FlapCount  int           `json:"flap_count,omitempty"`
	FlapWindow time.Duration `json:"flap_window,omitempty"`
}

// AnyRegion in Approval.Manual holds the first-seen nodes of every region.
const AnyRegion = "*"

// Validate refuses a policy the ledger cannot apply.
func (a Approval) Validate() error {
	for _, r := range a.Manual {
		if r == AnyRegion {
			continue
		}
		if err := validID("approval manual region", r); err != nil {
			return err
		}
	}
	switch {
	case a.FlapCount < 0 || a.FlapCount == 1:
		return errorf("approval flapping count %d: must be 0 (off) or at least 2", a.FlapCount)
	case a.FlapCount > 0 && a.FlapWindow <= 0:
		return errorf("approval flapping window %s: must be positive", a.FlapWindow)
	}
	return nil
}

// manualFor reports whether first-seen nodes of region are held.
func (a *Approval) manualFor(region string) bool {
	return a != nil && (slices.Contains(a.Manual, AnyRegion) || slices.Contains(a.Manual, region))
}

// holdReason is the history reason of a hold (spelled out in the record, not a reason code:
// codec.go), which starts with what happened so the flapping count reads it (reentries).
func holdReason(what, reason string) string { return what + "; held: " + reason }

// reentries counts the times node n re-entered provisioning mode at or after since, as its
// bounded history records them (a sighting that queued or held a finished node).
func reentries(n *Node, since time.Time) int {
	count := 0
	for _, tr := range n.History {
		if !tr.At.Before(since) && strings.HasPrefix(tr.Reason, seenAgainReason) {
			count++
		}
	}
	return count
}

// reentryHold is why a finished node old, seen again at now, is held instead of queued, with
// what to check before approving; "" queues it.
func (a *Approval) reentryHold(old *Node, now time.Time) (reason, detail string) {
	if a == nil {
		return "", ""
	}
	if a.FlapCount > 0 {
		if seen := reentries(old, now.Add(-a.FlapWindow)) + 1; seen >= a.FlapCount {
			return api.HoldFlapping, fmt.Sprintf("in provisioning mode again %d times within %s (approval.flapping %d/%s)", seen, a.FlapWindow, a.FlapCount, a.FlapWindow)
		}
	}
	if a.ReprovisionHold && old.State == api.StateProvisioned {
		return api.HoldReprovision, fmt.Sprintf("provisioned at %s by edge %s", old.FinishedAt.UTC().Format(time.RFC3339), lastEdge(old, api.StateProvisioned))
	}
	return "", ""
}

// lastEdge names the edge of n's last transition to state, "?" when its history has none.
func lastEdge(n *Node, state api.NodeState) string {
	for _, tr := range slices.Backward(n.History) {
		if tr.To == state && tr.Edge != "" {
			return tr.Edge
		}
	}
	if n.Edge != "" {
		return n.Edge
	}
	return "?"
}

// hold moves n to held for reason, recording when, which edge saw it and what to check; the
// history entry reads what (what happened), the hold's reason and detail.
func (n *Node) hold(tr Transition, what, reason, detail string, limit int) {
	n.HoldReason, n.HeldAt, n.HoldEdge, n.HoldDetail = reason, tr.At, tr.Edge, detail
	tr.Reason = holdReason(what, reason)
	if detail != "" {
		tr.Reason += " (" + detail + ")"
	}
	n.transition(api.StateHeld, tr, limit)
}

// VerbHold names a hold in the audit index: the ledger's own action, by the edge that saw it.
const VerbHold = "hold"

// auditHold records n's hold in the audit index.
func (t *txn) auditHold(n *Node, from api.NodeState) error {
	by := n.HoldEdge
	if by == "" {
		by = "ledger"
	}
	return t.audit(AuditEntry{At: n.HeldAt, By: by, Verb: VerbHold, Identity: n.Identity, Region: n.Region, From: from, Reason: n.HoldReason + ": " + n.HoldDetail})
}
