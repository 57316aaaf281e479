// SPDX-License-Identifier: Apache-2.0

package lessor

import (
	"context"
	"errors"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/pkg/api"
)

// Report applies results under a lease; results whose lease or token is not the node's current
// one are rejected and counted as stale. A report with a request id that was applied before is
// answered with that report's outcomes and counted again nowhere.
func (m *Manager) Report(ctx context.Context, ref Ref, requestID string, results []ledger.Result) (*ledger.ReportResult, error) {
	now, err := m.Stamp()
	if err != nil {
		return nil, err
	}
	res, err := m.propose(ctx, &ledger.Report{Now: now, LeaseID: ref.ID, Token: ref.Token, Policy: m.cfg.Policy, Results: results, Edge: ref.Edge, Region: ref.Region,
		RequestID: requestID, Keep: m.cfg.ReportMemory,
	})
	if err != nil {
		if m.metrics != nil && (errors.Is(err, ledger.ErrUnknownLease) || errors.Is(err, ledger.ErrTokenMismatch)) {
			m.metrics.StaleReports.Add(float64(len(results)))
		}
		return nil, err
	}
	rr := res.(*ledger.ReportResult)
	if m.metrics != nil && rr.Replayed {
		m.metrics.ReportReplays.Inc()
	}
	if m.metrics != nil && !rr.Replayed {
		m.metrics.StaleReports.Add(float64(len(rr.Rejected)))
		byID := make(map[string]api.Outcome, len(results))
		for _, r := range results {
			byID[r.Identity] = r.Outcome
		}
		for _, id := range rr.Applied {
			m.metrics.ResultsApplied.WithLabelValues(string(byID[id])).Inc()
		}
	}
	return rr, nil
}
