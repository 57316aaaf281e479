// SPDX-License-Identifier: Apache-2.0

package lessor

import (
	"fmt"
	"time"
)

// promotionTTL is how long from its own now a new leader must keep every outstanding lease
// (Extend.AtLeast): a full TTL, or longer when a lease had more left at last (the ledger's latest
// stamp, ledger time of the previous leadership). expires_at is a point of that leadership's
// time, which this one may have jumped past by its skew (lessor/DESIGN.md), while the remaining
// duration expires_at - last is measured on one clock, so it carries over: the edge's count
// under the longest TTL any answer gave it ends within it. Plus the extension, as for a full TTL.
func (m *Manager) promotionTTL(last time.Time) (time.Duration, error) {
	ttl := m.cfg.TTL
	if last.IsZero() {
		// No stamp, so no lease of this ledger's time: nothing to carry over.
		return ttl + m.cfg.Extension, nil
	}
	leases, err := m.ledger.Leases()
	if err != nil {
		return 0, fmt.Errorf("read outstanding leases: %w", err)
	}
	for _, ls := range leases {
		ttl = max(ttl, ls.ExpiresAt.Sub(last))
	}
	return ttl + m.cfg.Extension, nil
}
