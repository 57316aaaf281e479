// SPDX-License-Identifier: Apache-2.0

package coordinator

import (
	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/pkg/api"
)

// The ledger's records are its on-disk format and the api types are the wire format; they are
// converted here so either can change without the other.

// toAPILease is the lease as an edge sees it; Nodes is never nil, so an edge reads an empty list
// as "holds none" (edge/lease.Held.Renewed).
func toAPILease(l *ledger.Lease) *api.Lease {
	if l == nil {
		return nil
	}
	return &api.Lease{
		ID: l.ID, Edge: l.Edge, Region: l.Region, Nodes: append([]string{}, l.Nodes...),
		Token: l.Token, ExpiresAt: l.ExpiresAt, TTL: api.Duration(l.TTL),
	}
}

// toAPINode returns the part of the record the API shows; the record is the caller's own copy
// (the ledger decodes a fresh one on every read), so its slices are not copied again.
func toAPINode(n *ledger.Node) api.Node { return n.Node }

func toLedgerResults(in []api.NodeResult) []ledger.Result {
	out := make([]ledger.Result, len(in))
	for i, r := range in {
		out[i] = ledger.Result{Identity: r.Identity, Outcome: r.Outcome, Error: r.Error, InventoryVersion: r.Version}
	}
	return out
}
