// SPDX-License-Identifier: Apache-2.0

package lease

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/pkg/api"
)

// Request asks for a lease.
type Request struct {
	Edge   string
	Region string
	// RequestID, when set, makes the request idempotent: the lease id is derived from it, so a
	// retry (say, after the answer was lost in a failover) gets the lease the first try granted.
	RequestID string
	MaxNodes  int
	Wait      time.Duration
}

// leaseID is the lease id for r: random, or derived from the edge's request id.
func (m *Manager) leaseID(r Request) string {
	if r.RequestID == "" {
		return m.newID()
	}
	h := sha256.Sum256([]byte(r.Edge + "\x00" + r.Region + "\x00" + r.RequestID))
	return "r-" + hex.EncodeToString(h[:12])
}

// Acquire grants r.Edge a lease on up to r.MaxNodes eligible waiting nodes of r.Region, waiting
// up to r.Wait for some to become eligible. It returns (nil, false, nil) when none did in time
// and (nil, true, nil) while the operator has paused provisioning.
func (m *Manager) Acquire(ctx context.Context, r Request) (*ledger.Lease, bool, error) {
	edge, region, maxNodes := r.Edge, r.Region, r.MaxNodes
	if maxNodes <= 0 || maxNodes > m.cfg.MaxNodes {
		maxNodes = m.cfg.MaxNodes
	}
	id := m.leaseID(r)
	timer := time.NewTimer(min(max(r.Wait, 0), m.cfg.MaxWait))
	defer timer.Stop()
	for {
		regionCh, all, enabled := m.subscribe(region)
		if !enabled {
			return nil, false, ErrDisabled
		}
		p, err := m.ledger.Pause()
		if err != nil {
			return nil, false, fmt.Errorf("acquire for %s in %s: %w", edge, region, err)
		}
		if p.Paused {
			return nil, true, nil
		}
		// A retry whose lease exists already is proposed too, although its nodes are no longer
		// eligible: the log answers it, so a member deposed without knowing it cannot answer from
		// a stale ledger, and the lease's TTL is counted again from now, as the edge counts it.
		now := m.clock.Now()
		ready := r.RequestID != "" && m.holds(id, edge, region)
		if !ready {
			n, err := m.ledger.Eligible(region, edge, now, 1)
			if err != nil {
				return nil, false, fmt.Errorf("acquire for %s in %s: %w", edge, region, err)
			}
			ready = n > 0
		}
		if ready {
			res, err := m.propose(ctx, &ledger.Grant{
				Now: now, LeaseID: id, Edge: edge, Region: region, Max: maxNodes, TTL: m.cfg.TTL, Policy: m.cfg.Policy,
			})
			switch {
			case errors.Is(err, ledger.ErrPaused):
				return nil, true, nil
			case err != nil:
				return nil, false, fmt.Errorf("grant to %s in %s: %w", edge, region, err)
			}
			if g := res.(*ledger.GrantResult); g.Lease != nil {
				m.countGrant(g)
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

// holds reports whether edge already holds lease id in region.
func (m *Manager) holds(id, edge, region string) bool {
	ls, err := m.ledger.Lease(id)
	return err == nil && ls.Edge == edge && ls.Region == region
}

func (m *Manager) countGrant(g *ledger.GrantResult) {
	switch {
	case m.metrics == nil:
	case g.Replayed:
		m.metrics.LeaseReplays.Inc()
	default:
		m.metrics.LeaseGrants.Inc()
		m.metrics.LeaseNodesGranted.Add(float64(len(g.Lease.Nodes)))
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
