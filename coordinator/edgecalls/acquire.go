// SPDX-License-Identifier: Apache-2.0

package edgecalls

import (
	"context"

	"github.com/seed96588659/muster/coordinator/lessor"
	"github.com/seed96588659/muster/pkg/api"
)

// Acquire grants a lease on up to req.MaxNodes waiting nodes of req.Region, waiting up to
// req.Wait (long poll). An answer without a lease means nothing became eligible in time, or
// Paused. The reports it carries are applied first, each as Report would apply it, and answered
// in order. The caller adds what only it knows (the leader's address, the region's queue).
func (c *Calls) Acquire(ctx context.Context, req api.AcquireRequest) (api.AcquireResponse, error) {
	resp := api.AcquireResponse{CarriesReports: true}
	if err := c.m.LeaderOnly(); err != nil {
		return resp, err
	}
	answers, carried, carriedAt, err := c.carried(req.Reports)
	if err != nil {
		return resp, err
	}
	a, err := c.m.Leases().Acquire(ctx, lessor.Request{
		Edge: req.Edge, Region: req.Region, RequestID: req.RequestID, MaxNodes: req.MaxNodes, Wait: req.Wait.Std(), Reports: carried,
	})
	if err != nil {
		return resp, c.m.LeaseErr(err)
	}
	for j, ans := range a.Reports {
		c.answerCarried(&answers[carriedAt[j]], ans)
	}
	if a.Lease == nil && !a.Paused {
		// A grant was confirmed by its commit; "nothing, and not paused" comes from this
		// member's ledger, which a deposed leader must not vouch for.
		if err := c.m.ConfirmLeadership(ctx, "acquire for "+req.Edge); err != nil {
			return resp, err
		}
	}
	resp.Lease, resp.Paused, resp.PauseAsOf, resp.PauseEpoch, resp.Held = APILease(a.Lease), a.Paused, a.PauseAsOf, a.PauseEpoch, api.Duration(a.Held)
	if len(answers) > 0 {
		resp.Reports = answers
	}
	return resp, nil
}

// carried splits an acquire's reports: the answers, with what each report had refused by name
// before the ledger, and the reports the lease manager carries, with the index in answers of
// each.
func (c *Calls) carried(reports []api.ReportRequest) ([]api.ReportAnswer, []lessor.Carried, []int, error) {
	answers := make([]api.ReportAnswer, len(reports))
	var carried []lessor.Carried
	var carriedAt []int
	for i, rep := range reports {
		results, rejected, err := c.recordable(rep)
		if err != nil {
			return nil, nil, nil, err
		}
		answers[i] = api.ReportAnswer{RequestID: rep.RequestID, ReportResponse: api.ReportResponse{Applied: []string{}, Rejected: rejected}}
		if len(results) == 0 {
			continue
		}
		carried = append(carried, lessor.Carried{Ref: reportRef(rep), RequestID: rep.RequestID, Results: results})
		carriedAt = append(carriedAt, i)
	}
	return answers, carried, carriedAt, nil
}

// answerCarried fills a carried report's answer from the lease manager's: its results, or the
// refusal of the whole report with the code it would have travelled with alone.
func (c *Calls) answerCarried(to *api.ReportAnswer, ans lessor.CarriedAnswer) {
	if ans.Err != nil {
		_, code := api.Classify(c.o.Errors, ans.Err)
		to.Error = &api.ErrorBody{Error: ans.Err.Error(), Code: code}
		return
	}
	addReportResult(&to.ReportResponse, ans.Result)
}
