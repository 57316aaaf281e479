// SPDX-License-Identifier: Apache-2.0

package lessor

import (
	"context"
	"errors"
	"time"

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
	cmd := m.reportCommand(now, ref, requestID, results)
	res, err := m.propose(ctx, &cmd)
	if err != nil {
		m.countReport(results, nil, err)
		return nil, err
	}
	rr := res.(*ledger.ReportResult)
	m.countReport(results, rr, nil)
	return rr, nil
}

// reportCommand is the ledger's report of results under ref, stamped now.
func (m *Manager) reportCommand(now time.Time, ref Ref, requestID string, results []ledger.Result) ledger.Report {
	return ledger.Report{Now: now, LeaseID: ref.ID, Token: ref.Token, Policy: m.cfg.Policy, Results: results, Edge: ref.Edge, Region: ref.Region,
		RequestID: requestID, Keep: m.cfg.ReportMemory}
}

// countReport counts a report's answer rr, or its refusal err: stale results, replays and the
// results applied by outcome.
func (m *Manager) countReport(results []ledger.Result, rr *ledger.ReportResult, err error) {
	switch {
	case m.metrics == nil:
	case err != nil:
		if errors.Is(err, ledger.ErrUnknownLease) || errors.Is(err, ledger.ErrTokenMismatch) {
			m.metrics.StaleReports.Add(float64(len(results)))
		}
	case rr.Replayed:
		m.metrics.ReportReplays.Inc()
	default:
		m.metrics.StaleReports.Add(float64(len(rr.Rejected)))
		byID := make(map[string]api.Outcome, len(results))
		for _, r := range results {
			byID[r.Identity] = r.Outcome
		}
		for _, id := range rr.Applied {
			m.metrics.ResultsApplied.WithLabelValues(string(byID[id])).Inc()
		}
	}
}
