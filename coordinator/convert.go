// SPDX-License-Identifier: Apache-2.0

package coordinator

import (
	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/pkg/api"
)

// The ledger's records are its on-disk format and the api types are the wire format; they are
// converted here so either can change without the other.

// toAPINode returns the part of the record the API shows (not the provisioning lock); the record
// is the caller's own copy (the ledger decodes a fresh one on every read), so Facts is not copied
// again.
func toAPINode(n *ledger.Node) api.Node {
	return api.Node{
		Identity: n.Identity, Region: n.Region, State: n.State, Attempts: n.Attempts,
		LeaseID: n.LeaseID, LeaseToken: n.LeaseToken, Edge: n.Edge,
		InventoryVersion: n.InventoryVersion, TargetVersion: n.TargetVersion, LastError: n.LastError,
		Facts: n.Facts, DiscoveredAt: n.DiscoveredAt, LeasedAt: n.LeasedAt, FinishedAt: n.FinishedAt,
		NotBefore: n.NotBefore, History: toAPIHistory(n.History), Hold: toAPIHold(n),
	}
}

// toAPIHold is the hold of a held node (or of a banned one that was held), nil for others.
func toAPIHold(n *ledger.Node) *api.Hold {
	if n.HoldReason == "" {
		return nil
	}
	return &api.Hold{Reason: n.HoldReason, At: n.HeldAt, Edge: n.HoldEdge, Detail: n.HoldDetail}
}

// toAPIHistory keeps nil as nil: a listing without history shows none (omitempty).
func toAPIHistory(in []ledger.Transition) []api.Transition {
	if in == nil {
		return nil
	}
	out := make([]api.Transition, len(in))
	for i, t := range in {
		out[i] = api.Transition{
			At: t.At, From: t.From, To: t.To, Reason: t.Reason, Edge: t.Edge,
			LeaseID: t.LeaseID, LeaseToken: t.LeaseToken, Error: t.Error,
		}
	}
	return out
}
