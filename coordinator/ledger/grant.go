// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	bolt "go.etcd.io/bbolt"
)

func applyGrant(t *txn, index uint64, c *Grant) (any, error) {
	if err := validNow(c.Now); err != nil {
		return nil, err
	}
	for _, v := range [][2]string{{"lease id", c.LeaseID}, {"edge", c.Edge}, {"region", c.Region}} {
		if err := validID(v[0], v[1]); err != nil {
			return nil, err
		}
	}
	if c.Max < 1 || c.Max > MaxBatch {
		return nil, errorf("grant of %d nodes: must be between 1 and %d", c.Max, MaxBatch)
	}
	if c.TTL <= 0 {
		return nil, errorf("grant ttl %s: must be positive", c.TTL)
	}
	if err := c.Policy.Validate(); err != nil {
		return nil, err
	}
	switch prev, err := getLease(t.leases, c.LeaseID); {
	case err != nil:
		return nil, storageError{err}
	case prev != nil && (prev.Edge != c.Edge || prev.Region != c.Region):
		return nil, errorf("lease id %q already exists for edge %s in %s", c.LeaseID, prev.Edge, prev.Region)
	case prev != nil:
		// The same edge asking again under the same id (a retry whose first answer was lost,
		// perhaps across a failover) gets the lease it already holds, not a second one. The edge
		// counts the lease from when it sent the retry, so the TTL runs from now, as on a renewal;
		// nobody else can hold the nodes while the lease exists, so this is safe even past
		// expires_at.
		prev.RenewedAt = maxTime(prev.RenewedAt, c.Now)
		prev.ExpiresAt = maxTime(prev.ExpiresAt, c.Now.Add(c.TTL))
		prev.TTL = c.TTL
		if err := t.putLease(prev); err != nil {
			return nil, storageError{err}
		}
		return &GrantResult{Lease: prev, Replayed: true}, nil
	}
	// Only a new lease waits for the operator: a replay answers a lease that exists already.
	if p, err := readPause(t.meta); err != nil {
		return nil, storageError{err}
	} else if p.Paused {
		return nil, ErrPaused
	}
	if err := heldGrant(t.meta, c.Now); err != nil {
		return nil, err
	}
	ids, err := eligible(t.waiting, c.Region, c.Edge, c.Now, c.Max)
	if err != nil {
		return nil, storageError{err}
	}
	if len(ids) == 0 {
		return &GrantResult{}, nil
	}
	ls := &Lease{
		ID: c.LeaseID, Edge: c.Edge, Region: c.Region, Nodes: ids, Token: index,
		GrantedAt: c.Now, RenewedAt: c.Now, ExpiresAt: c.Now.Add(c.TTL), TTL: c.TTL,
	}
	for _, id := range ids {
		old, err := getNode(t.nodes, id)
		if err != nil || old == nil {
			return nil, storageError{fmt.Errorf("waiting index names node %q: %v", id, err)}
		}
		n := *old
		n.LeaseID, n.LeaseToken, n.Edge, n.LeasedAt = ls.ID, ls.Token, ls.Edge, c.Now
		n.transition(api.StateLeased, Transition{At: c.Now, Reason: "granted", Edge: c.Edge, LeaseID: ls.ID, LeaseToken: ls.Token}, c.Policy.HistoryLimit)
		if err := t.putNode(old, &n); err != nil {
			return nil, storageError{err}
		}
	}
	if err := t.putLease(ls); err != nil {
		return nil, storageError{err}
	}
	return &GrantResult{Lease: ls}, nil
}

// eligible returns up to max identities of region's waiting nodes that edge may take at now.
func eligible(waiting *bolt.Bucket, region, edge string, now time.Time, limit int) ([]string, error) {
	prefix := append([]byte(region), 0)
	nowNano := uint64(max(now.UnixNano(), 0))
	var ids []string
	cur := waiting.Cursor()
	for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(ids) < limit; k, v = cur.Next() {
		rest := k[len(prefix):]
		if len(rest) < 8 || len(v) < 8 {
			return nil, fmt.Errorf("malformed waiting index key %q", k)
		}
		if binary.BigEndian.Uint64(rest[:8]) > nowNano {
			break
		}
		lockUntil := binary.BigEndian.Uint64(v[:8])
		if lockUntil > nowNano && string(v[8:]) != edge {
			continue
		}
		ids = append(ids, string(rest[8:]))
	}
	return ids, nil
}
