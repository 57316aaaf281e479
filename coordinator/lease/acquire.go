// SPDX-License-Identifier: Apache-2.0

package lease

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/pkg/api"
)

// Acquire grants edge a lease on up to maxNodes eligible waiting nodes of region, waiting up to
// wait for some to become eligible. It returns (nil, false, nil) when none did in time and
// (nil, true, nil) while the operator has paused provisioning.
func (m *Manager) Acquire(ctx context.Context, edge, region string, maxNodes int, wait time.Duration) (*ledger.Lease, bool, error) {
	if maxNodes <= 0 || maxNodes > m.cfg.MaxNodes {
		maxNodes = m.cfg.MaxNodes
	}
	timer := time.NewTimer(min(max(wait, 0), m.cfg.MaxWait))
	defer timer.Stop()
	for {
		regionCh, all, enabled := m.subscribe(region)
		if !enabled {
			return nil, false, ErrDisabled
		}
		p, err := m.ledger.Pause()
		if err != nil {
			return nil, false, err
		}
		if p.Paused {
			return nil, true, nil
		}
		now := m.clock.Now()
		n, err := m.ledger.Eligible(region, edge, now, 1)
		if err != nil {
			return nil, false, fmt.Errorf("acquire for %s in %s: %w", edge, region, err)
		}
		if n > 0 {
			res, err := m.propose(ctx, &ledger.Grant{
				Now: now, LeaseID: m.newID(), Edge: edge, Region: region, Max: maxNodes, TTL: m.cfg.TTL, Policy: m.cfg.Policy,
			})
			switch {
			case errors.Is(err, ledger.ErrPaused):
				return nil, true, nil
			case err != nil:
				return nil, false, fmt.Errorf("grant to %s in %s: %w", edge, region, err)
			}
			if g := res.(*ledger.GrantResult); g.Lease != nil {
				if m.metrics != nil {
					m.metrics.LeaseGrants.Inc()
					m.metrics.LeaseNodesGranted.Add(float64(len(g.Lease.Nodes)))
				}
				return g.Lease, false, nil
			}
		}
		recheck := time.NewTimer(m.cfg.Recheck)
		select {
		case <-regionCh:
		case <-all:
		case <-recheck.C:
		case <-timer.C:
			recheck.Stop()
			return nil, false, nil
		case <-ctx.Done():
			recheck.Stop()
			return nil, false, ctx.Err()
		}
		recheck.Stop()
	}
}

// Renew extends a lease by the TTL from now.
func (m *Manager) Renew(ctx context.Context, id string, token uint64, edge, region string) (*ledger.Lease, error) {
	if err := m.checkEnabled(); err != nil {
		return nil, err
	}
	res, err := m.propose(ctx, &ledger.Renew{Now: m.clock.Now(), LeaseID: id, Token: token, TTL: m.cfg.TTL, Edge: edge, Region: region})
	if err != nil {
		return nil, err
	}
	if m.metrics != nil {
		m.metrics.LeaseRenewals.Inc()
	}
	return res.(*ledger.RenewResult).Lease, nil
}

// Report applies results under a lease; results whose lease or token is not the node's current
// one are rejected and counted as stale.
func (m *Manager) Report(ctx context.Context, id string, token uint64, edge, region string, results []ledger.Result) (*ledger.ReportResult, error) {
	if err := m.checkEnabled(); err != nil {
		return nil, err
	}
	res, err := m.propose(ctx, &ledger.Report{Now: m.clock.Now(), LeaseID: id, Token: token, Policy: m.cfg.Policy, Results: results, Edge: edge, Region: region})
	if err != nil {
		if m.metrics != nil && (errors.Is(err, ledger.ErrUnknownLease) || errors.Is(err, ledger.ErrTokenMismatch)) {
			m.metrics.StaleReports.Add(float64(len(results)))
		}
		return nil, err
	}
	rr := res.(*ledger.ReportResult)
	if m.metrics != nil {
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
