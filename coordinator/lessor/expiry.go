// SPDX-License-Identifier: Apache-2.0

package lessor

import (
	"context"
	"fmt"
	"time"

	"github.com/seed96588659/muster/coordinator/ledger"
)

// expireLoop proposes the expiry of leases past expires_at+grace. The ledger checks the time
// again, so a lease renewed in between survives.
func (m *Manager) expireLoop(ctx context.Context, done chan struct{}) {
	defer close(done)
	tick := time.NewTicker(m.cfg.ExpiryInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := m.ExpireDue(ctx); err != nil && ctx.Err() == nil {
			m.log.Warn("expire leases", "error", err)
		}
		if err := m.recordHold(ctx); err != nil && ctx.Err() == nil {
			m.log.Warn("record hold on grants", "error", err)
		}
	}
}

// ExpireDue expires every lease due now; the leader's loop calls it, and tests may too.
func (m *Manager) ExpireDue(ctx context.Context) error {
	if err := m.checkEnabled(); err != nil {
		return err
	}
	leases, err := m.ledger.Leases()
	if err != nil {
		return fmt.Errorf("expire leases: %w", err)
	}
	now, err := m.Stamp()
	if err != nil {
		return err
	}
	var due []string
	for _, ls := range leases {
		if !now.Before(ls.ExpiresAt.Add(m.cfg.Grace)) {
			due = append(due, ls.ID)
		}
	}
	for len(due) > 0 {
		n := min(len(due), ledger.MaxBatch)
		res, err := m.propose(ctx, &ledger.Expire{Now: now, Grace: m.cfg.Grace, Policy: m.cfg.Policy, LeaseIDs: due[:n]})
		if err != nil {
			return fmt.Errorf("expire %d leases: %w", n, err)
		}
		er := res.(*ledger.ExpireResult)
		if m.metrics != nil {
			m.metrics.LeaseExpiries.Add(float64(len(er.Expired)))
		}
		if len(er.Expired) > 0 {
			m.log.Info("leases expired", "leases", len(er.Expired), "returned", er.Returned, "abandoned", er.Abandoned)
		}
		due = due[n:]
	}
	return nil
}
