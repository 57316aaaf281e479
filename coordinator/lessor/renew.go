// SPDX-License-Identifier: Apache-2.0

package lessor

import (
	"context"

	"github.com/seed96588659/muster/coordinator/ledger"
)

// Renew extends a lease to a TTL from now, never shortening it. The edge counts the renewed lease
// from when it sent the renewal, for the TTL the answer carries.
func (m *Manager) Renew(ctx context.Context, ref Ref) (*ledger.Lease, error) {
	now, err := m.Stamp()
	if err != nil {
		return nil, err
	}
	res, err := m.propose(ctx, &ledger.Renew{Now: now, LeaseID: ref.ID, Token: ref.Token, TTL: m.cfg.TTL, Edge: ref.Edge, Region: ref.Region})
	if err != nil {
		return nil, err
	}
	if m.metrics != nil {
		m.metrics.LeaseRenewals.Inc()
	}
	return res.(*ledger.RenewResult).Lease, nil
}
