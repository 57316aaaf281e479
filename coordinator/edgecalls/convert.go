// SPDX-License-Identifier: Apache-2.0

package edgecalls

import (
	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/coordinator/lessor"
	"github.com/seed96588659/muster/pkg/api"
)

// The ledger's records are its on-disk format and the api types are the wire format; they are
// converted here so either can change without the other.

// APILease is the lease as an edge sees it; Nodes is never nil, so an edge reads an empty list
// as "holds none" (edge/lease.Held.Renewed).
func APILease(l *ledger.Lease) *api.Lease {
	if l == nil {
		return nil
	}
	return &api.Lease{
		ID: l.ID, Edge: l.Edge, Region: l.Region, Nodes: append([]string{}, l.Nodes...),
		Token: l.Token, ExpiresAt: l.ExpiresAt, TTL: api.Duration(l.TTL),
	}
}

// LedgerResults is the one mapping of an edge's reported results to the ledger's.
func LedgerResults(in []api.NodeResult) []ledger.Result {
	out := make([]ledger.Result, len(in))
	for i, r := range in {
		out[i] = ledger.Result{Identity: r.Identity, Outcome: r.Outcome, Error: r.Error, InventoryVersion: r.Version}
	}
	return out
}

// reportRef names the lease a report is made under.
func reportRef(req api.ReportRequest) lessor.Ref {
	return lessor.Ref{ID: req.LeaseID, Token: req.Token, Edge: req.Edge, Region: req.Region}
}

// addReportResult adds what the ledger applied and rejected of a report to its answer.
func addReportResult(resp *api.ReportResponse, rr *ledger.ReportResult) {
	resp.Applied = append(resp.Applied, rr.Applied...)
	for _, r := range rr.Rejected {
		resp.Rejected = append(resp.Rejected, api.RejectedResult{Identity: r.Identity, Reason: r.Reason})
	}
}
