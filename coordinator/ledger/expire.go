// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"fmt"
	"strings"

	"github.com/seed96588659/muster/pkg/api"
)

func applyExpire(t *txn, c *Expire) (any, error) {
	if err := validBatch(c.Now, c.Policy, len(c.LeaseIDs), "expire", "leases"); err != nil {
		return nil, err
	}
	if c.Grace < 0 {
		return nil, errorf("expire grace %s: must not be negative", c.Grace)
	}
	res := &ExpireResult{}
	for _, id := range c.LeaseIDs {
		ls, err := getLease(t.leases, id)
		if err != nil {
			return nil, storageError{err}
		}
		// A lease renewed, finished or extended since the leader looked is left alone.
		if ls == nil || c.Now.Before(ls.ExpiresAt.Add(c.Grace)) {
			continue
		}
		for _, nid := range ls.Nodes {
			old, err := getNode(t.nodes, nid)
			if err != nil {
				return nil, storageError{err}
			}
			if old == nil || old.State != api.StateLeased || old.LeaseID != ls.ID || old.LeaseToken != ls.Token {
				continue
			}
			n := *old
			n.LeaseID, n.LeaseToken = "", 0
			n.LastError = expiredReason
			// The edge may have called the node until the lease's end; go-choria keeps its lock a
			// full window after that call.
			n.LockEdge, n.LockUntil = ls.Edge, ls.ExpiresAt.Add(c.Policy.LockWindow)
			retry(&n, Transition{At: c.Now, Edge: ls.Edge, LeaseID: ls.ID, LeaseToken: ls.Token}, expiredReason, c.Now, c.Policy)
			if n.State == api.StateAbandoned {
				res.Abandoned++
			} else {
				res.Returned++
			}
			if err := t.putNode(old, &n); err != nil {
				return nil, storageError{err}
			}
			if err := t.noteFailure(&n); err != nil {
				return nil, storageError{err}
			}
		}
		if readProtocol(t.meta) >= fenceLockProtocol {
			if err := lockFenced(t, ls, c.Policy); err != nil {
				return nil, storageError{err}
			}
		}
		if err := t.unfence(ls); err != nil {
			return nil, storageError{err}
		}
		if err := t.leases.Delete([]byte(ls.ID)); err != nil {
			return nil, storageError{fmt.Errorf("delete lease %s: %w", ls.ID, err)}
		}
		res.Expired = append(res.Expired, ls.ID)
	}
	return res, nil
}

// expiredReason is the reason of a node's transition out of a lease by its expiry (with
// "; abandoned after N attempts" when that was its last attempt). It is on-disk format: a reason
// code (codec.go), and what byExpiry tells an expiry from a result of the lease by.
const expiredReason = "lease expired"

// byExpiry reports whether tr, a transition carrying a lease id, is that lease's expiry rather
// than a result it reported: only the expiry leaves the lease's late facts to be recorded.
func byExpiry(tr Transition) bool {
	return tr.From == api.StateLeased && strings.HasPrefix(tr.Reason, expiredReason)
}

// lockFenced gives each node an ending lease still fences the lock window of that lease's edge
// from the lease's end (fenceLockProtocol), unless a later window is already recorded: the edge
// may have called the node until its own count of the lease ended, so go-choria's lock is that
// edge's until then plus the window. Below the gate the window stays the one the late result set.
func lockFenced(t *txn, ls *Lease, p Policy) error {
	until := ls.ExpiresAt.Add(p.LockWindow)
	for _, id := range ls.Fenced {
		old, err := getNode(t.nodes, id)
		if err != nil {
			return err
		}
		if old == nil || !old.LockUntil.Before(until) {
			continue
		}
		n := *old
		n.LockEdge, n.LockUntil = ls.Edge, until
		if err := t.putNode(old, &n); err != nil {
			return err
		}
	}
	return nil
}
