// SPDX-License-Identifier: Apache-2.0

package coordinator

import (
	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/pkg/api"
)

// The ledger's records are its on-disk format and the api types are the wire format; they are
// converted here so either can change without the other.

func toAPILease(l *ledger.Lease) *api.Lease {
	if l == nil {
		return nil
	}
	return &api.Lease{
		ID: l.ID, Edge: l.Edge, Region: l.Region, Nodes: append([]string(nil), l.Nodes...),
		Token: l.Token, ExpiresAt: l.ExpiresAt, TTL: api.Duration(l.TTL),
	}
}

func toAPINode(n *ledger.Node) api.Node {
	out := api.Node{
		Identity: n.Identity, Region: n.Region, State: api.NodeState(n.State), Attempts: n.Attempts,
		LeaseID: n.LeaseID, LeaseToken: n.LeaseToken, Edge: n.Edge, InventoryVersion: n.InventoryVersion,
		TargetVersion: n.TargetVersion, LastError: n.LastError, Facts: n.Facts, DiscoveredAt: n.DiscoveredAt,
		LeasedAt: n.LeasedAt, FinishedAt: n.FinishedAt, NotBefore: n.NotBefore,
	}
	for _, t := range n.History {
		out.History = append(out.History, api.Transition{
			At: t.At, From: api.NodeState(t.From), To: api.NodeState(t.To), Reason: t.Reason, Edge: t.Edge,
			LeaseID: t.LeaseID, LeaseToken: t.LeaseToken, Error: t.Error,
		})
	}
	return out
}

func toLedgerResults(in []api.NodeResult) []ledger.Result {
	out := make([]ledger.Result, len(in))
	for i, r := range in {
		out[i] = ledger.Result{Identity: r.Identity, Outcome: ledger.Outcome(r.Outcome), Error: r.Error, InventoryVersion: r.Version}
	}
	return out
}
