// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"fmt"
	"time"
)

func checkLease(t *txn, id string, token uint64, edge, region string) (*Lease, error) {
	if err := validID("lease id", id); err != nil {
		return nil, err
	}
	ls, err := getLease(t.leases, id)
	if err != nil {
		return nil, storageError{err}
	}
	if ls == nil {
		return nil, fmt.Errorf("%w: %s", ErrUnknownLease, id)
	}
	if ls.Token != token {
		return nil, fmt.Errorf("%w: lease %s has token %d, request carries %d", ErrTokenMismatch, id, ls.Token, token)
	}
	if region != "" && region != ls.Region {
		return nil, fmt.Errorf("%w: lease %s is for region %s, request names %s", ErrWrongRegion, id, ls.Region, region)
	}
	if edge != "" && edge != ls.Edge {
		return nil, fmt.Errorf("%w: lease %s is held by edge %s, request comes from %s", ErrWrongEdge, id, ls.Edge, edge)
	}
	return ls, nil
}

func applyRenew(t *txn, c *Renew) (any, error) {
	if err := validNow(c.Now); err != nil {
		return nil, err
	}
	if c.TTL <= 0 {
		return nil, errorf("renew ttl %s: must be positive", c.TTL)
	}
	ls, err := checkLease(t, c.LeaseID, c.Token, c.Edge, c.Region)
	if err != nil {
		return nil, err
	}
	if c.Now.After(ls.ExpiresAt) {
		return nil, fmt.Errorf("%w: lease %s expired at %s", ErrLeaseExpired, ls.ID, ls.ExpiresAt.Format(time.RFC3339Nano))
	}
	// Never backwards: renewals applied out of stamp order, or one from a leader with a shorter
	// TTL, keep the later expiry. The answer's TTL is the one this renewal granted: what the edge
	// counts from its send.
	ls.RenewedAt = maxTime(ls.RenewedAt, c.Now)
	ls.ExpiresAt = maxTime(ls.ExpiresAt, c.Now.Add(c.TTL))
	ls.TTL = c.TTL
	if err := t.putLease(ls); err != nil {
		return nil, storageError{err}
	}
	return &RenewResult{Lease: ls}, nil
}
