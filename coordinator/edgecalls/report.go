// SPDX-License-Identifier: Apache-2.0

package edgecalls

import (
	"context"
	"fmt"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/pkg/api"
)

// Report applies results under a lease. A lease that is unknown or a token that does not match
// fails the whole request; single results the ledger refuses (node not held by this lease) are
// listed in Rejected, and both are counted as stale reports. Results whose outcome the cluster
// protocol cannot record yet are listed in Rejected too, not counted as stale.
func (c *Calls) Report(ctx context.Context, req api.ReportRequest) (api.ReportResponse, error) {
	resp := api.ReportResponse{Applied: []string{}}
	if err := c.m.LeaderOnly(); err != nil {
		return resp, err
	}
	results, rejected, err := c.recordable(req)
	if err != nil {
		return resp, err
	}
	resp.Rejected = rejected
	if len(results) == 0 {
		return resp, nil
	}
	rr, err := c.m.Leases().Report(ctx, reportRef(req), req.RequestID, results)
	if err != nil {
		return resp, c.m.LeaseErr(err)
	}
	addReportResult(&resp, rr)
	return resp, nil
}

// recordable is what of report req goes to the ledger, and the results refused by name before:
// those the API does not take, and outcomes the cluster protocol cannot record on every member
// yet (in the log they would fail the whole report).
func (c *Calls) recordable(req api.ReportRequest) ([]ledger.Result, []api.RejectedResult, error) {
	valid, rejected := req.SplitResults()
	if len(valid) == 0 {
		return nil, rejected, nil
	}
	results, held, err := c.m.Ledger().Recordable(LedgerResults(valid))
	if err != nil {
		return nil, nil, fmt.Errorf("report of lease %s: read cluster protocol: %w", req.LeaseID, err)
	}
	for _, r := range held {
		rejected = append(rejected, api.RejectedResult{Identity: r.Identity, Reason: r.Reason})
	}
	return results, rejected, nil
}
