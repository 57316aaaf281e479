// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	bolt "go.etcd.io/bbolt"
)

// Limits on one command, so a single request cannot make an apply unbounded.
const (
	MaxBatch       = 10000
	maxIdentityLen = 255
	maxFactsLen    = 64 << 10
)

// command processing: every handler validates fully before its first write, so a refused command
// leaves the ledger unchanged while its batch-mates still apply in the same transaction.

func (l *Ledger) applyOne(t *txn, index uint64, data []byte) any {
	if len(data) == 0 {
		return fmt.Errorf("%w: empty log entry at index %d", ErrBadCommand, index)
	}
	typ := CommandType(data[0])
	body := data[1:]
	switch typ &^ IgnoreUnknown {
	case CmdRegister:
		return decodeAnd(body, typ, func(c *Register) (any, error) { return applyRegister(t, c) })
	case CmdGrant:
		return decodeAnd(body, typ, func(c *Grant) (any, error) { return applyGrant(t, index, c) })
	case CmdRenew:
		return decodeAnd(body, typ, func(c *Renew) (any, error) { return applyRenew(t, c) })
	case CmdReport:
		return decodeAnd(body, typ, func(c *Report) (any, error) { return applyReport(t, c) })
	case CmdExpire:
		return decodeAnd(body, typ, func(c *Expire) (any, error) { return applyExpire(t, c) })
	case CmdExtend:
		return decodeAnd(body, typ, func(c *Extend) (any, error) { return applyExtend(t, c) })
	case CmdPause:
		return decodeAnd(body, typ, func(c *Pause) (any, error) { return applyPause(t, c) })
	case CmdMember:
		return decodeAnd(body, typ, func(c *Member) (any, error) { return applyMember(t, c) })
	}
	if typ&IgnoreUnknown != 0 {
		l.log.Warn("ignoring unknown ledger command", "type", uint8(typ), "index", index)
		return nil
	}
	// Refusing (rather than panicking) keeps the member alive; the operator must upgrade it.
	l.log.Error("unknown ledger command", "type", uint8(typ), "index", index)
	return fmt.Errorf("%w: type %d at index %d", ErrUnknownCommand, uint8(typ), index)
}

// storageError marks an error of bbolt itself, as opposed to a refused command.
type storageError struct{ error }

func decodeAnd[C any](body []byte, typ CommandType, fn func(*C) (any, error)) any {
	c := new(C)
	if err := json.Unmarshal(body, c); err != nil {
		return fmt.Errorf("%w: decode %s: %v", ErrBadCommand, typ, err)
	}
	res, err := fn(c)
	if err != nil {
		return err
	}
	return res
}

func validID(what, s string) error {
	switch {
	case s == "":
		return errorf("%s is empty", what)
	case len(s) > maxIdentityLen:
		return errorf("%s %.40q... is longer than %d bytes", what, s, maxIdentityLen)
	case strings.IndexByte(s, 0) >= 0:
		return errorf("%s %q contains a NUL byte", what, s)
	}
	return nil
}

func validNow(now time.Time) error {
	if now.IsZero() {
		return errorf("command carries no time")
	}
	return nil
}

// validBatch refuses a command that moves nodes without a time, under a bad policy, or with more
// than MaxBatch items (what names the command, of what its items).
func validBatch(now time.Time, p Policy, items int, what, of string) error {
	if err := validNow(now); err != nil {
		return err
	}
	if err := p.Validate(); err != nil {
		return err
	}
	if items > MaxBatch {
		return errorf("%s of %d %s exceeds the batch limit %d", what, items, of, MaxBatch)
	}
	return nil
}

func applyRegister(t *txn, c *Register) (any, error) {
	if err := validBatch(c.Now, c.Policy, len(c.Nodes), "register", "nodes"); err != nil {
		return nil, err
	}
	res := &RegisterResult{}
	for _, rn := range c.Nodes {
		if err := validID("node identity", rn.Identity); err != nil {
			res.Rejected = append(res.Rejected, reject(rn.Identity, err))
			continue
		}
		if err := validID("region of node "+rn.Identity, rn.Region); err != nil {
			res.Rejected = append(res.Rejected, reject(rn.Identity, err))
			continue
		}
		if len(rn.Facts) > maxFactsLen {
			res.Rejected = append(res.Rejected, reject(rn.Identity, errorf("facts of node %s exceed %d bytes", rn.Identity, maxFactsLen)))
			continue
		}
		old, err := getNode(t.nodes, rn.Identity)
		if err != nil {
			return nil, storageError{err}
		}
		if old == nil {
			n := &Node{Node: api.Node{
				Identity: rn.Identity, Region: rn.Region, InventoryVersion: rn.InventoryVersion,
				Facts: rn.Facts, DiscoveredAt: c.Now, NotBefore: c.Now,
			}}
			n.transition(api.StateWaiting, api.Transition{At: c.Now, Reason: "discovered", Edge: c.Edge}, c.Policy.HistoryLimit)
			if err := t.putNode(nil, n); err != nil {
				return nil, storageError{err}
			}
			res.Added++
			continue
		}
		if old.Region != rn.Region && old.State == api.StateLeased {
			res.Rejected = append(res.Rejected, reject(rn.Identity, fmt.Errorf("%w: node %s is leased in region %s, not %s", ErrWrongRegion, rn.Identity, old.Region, rn.Region)))
			continue
		}
		n := *old
		n.History = append([]api.Transition(nil), old.History...)
		changed := n.Region != rn.Region || n.InventoryVersion != rn.InventoryVersion || (len(rn.Facts) > 0 && !bytes.Equal(n.Facts, rn.Facts))
		n.Region = rn.Region
		n.InventoryVersion = rn.InventoryVersion
		if len(rn.Facts) > 0 {
			n.Facts = rn.Facts
		}
		requeue := ""
		switch old.State {
		case api.StateProvisioned, api.StateShutdown:
			if !c.Now.Before(old.FinishedAt.Add(c.Policy.ReprovisionAfter)) {
				requeue = "seen again in provisioning mode"
				n.Attempts = 0
				n.LastError = ""
			}
		case api.StateDeferred:
			if !c.Now.Before(old.NotBefore) {
				requeue = "seen again after defer"
			}
		}
		if requeue != "" {
			n.NotBefore = maxTime(n.NotBefore, c.Now)
			n.transition(api.StateWaiting, api.Transition{At: c.Now, Reason: requeue, Edge: c.Edge}, c.Policy.HistoryLimit)
			res.Requeued++
		} else if !changed {
			res.Unchanged++
			continue
		} else {
			res.Unchanged++
		}
		if err := t.putNode(old, &n); err != nil {
			return nil, storageError{err}
		}
	}
	return res, nil
}

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
	if p, err := readPause(t.meta); err != nil {
		return nil, storageError{err}
	} else if p.Paused {
		return nil, ErrPaused
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
		if exp := c.Now.Add(c.TTL); exp.After(prev.ExpiresAt) {
			prev.RenewedAt, prev.ExpiresAt, prev.TTL = c.Now, exp, c.TTL
			if err := t.putLease(prev); err != nil {
				return nil, storageError{err}
			}
		}
		return &GrantResult{Lease: prev, Replayed: true}, nil
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
		n.transition(api.StateLeased, api.Transition{At: c.Now, Reason: "granted", Edge: c.Edge, LeaseID: ls.ID, LeaseToken: ls.Token}, c.Policy.HistoryLimit)
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
		return nil, fmt.Errorf("%w: lease %s is held by edge %s, request comes from %s", ErrWrongRegion, id, ls.Edge, edge)
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
	ls.RenewedAt = c.Now
	ls.ExpiresAt = c.Now.Add(c.TTL)
	ls.TTL = c.TTL
	if err := t.putLease(ls); err != nil {
		return nil, storageError{err}
	}
	return &RenewResult{Lease: ls}, nil
}

func applyReport(t *txn, c *Report) (any, error) {
	if err := validBatch(c.Now, c.Policy, len(c.Results), "report", "results"); err != nil {
		return nil, err
	}
	for _, r := range c.Results {
		if !r.Outcome.Valid() {
			return nil, errorf("node %s: unknown outcome %q", r.Identity, r.Outcome)
		}
	}
	ls, err := checkLease(t, c.LeaseID, c.Token, c.Edge, c.Region)
	if err != nil {
		return nil, err
	}
	res := &ReportResult{}
	done := map[string]bool{}
	for _, r := range c.Results {
		old, err := getNode(t.nodes, r.Identity)
		if err != nil {
			return nil, storageError{err}
		}
		switch {
		case old == nil:
			res.Rejected = append(res.Rejected, reject(r.Identity, fmt.Errorf("%w: %s", ErrUnknownNode, r.Identity)))
			continue
		case old.Region != ls.Region:
			res.Rejected = append(res.Rejected, reject(r.Identity, fmt.Errorf("%w: node %s is in region %s, lease %s is for %s", ErrWrongRegion, r.Identity, old.Region, ls.ID, ls.Region)))
			continue
		case old.State != api.StateLeased || old.LeaseID != ls.ID || old.LeaseToken != ls.Token:
			res.Rejected = append(res.Rejected, reject(r.Identity, fmt.Errorf("%w: node %s, lease %s token %d", ErrNotInLease, r.Identity, ls.ID, ls.Token)))
			continue
		}
		n := *old
		tr := api.Transition{At: c.Now, Edge: ls.Edge, LeaseID: ls.ID, LeaseToken: ls.Token, Error: r.Error}
		if r.InventoryVersion != "" {
			n.InventoryVersion = r.InventoryVersion
		}
		if r.TargetVersion != "" {
			n.TargetVersion = r.TargetVersion
		}
		n.LeaseID, n.LeaseToken = "", 0
		n.LastError = r.Error
		// The edge held go-choria's lock until now; only it may be offered the node within the window.
		n.LockEdge, n.LockUntil = ls.Edge, c.Now.Add(c.Policy.LockWindow)
		switch r.Outcome {
		case api.OutcomeProvisioned:
			n.FinishedAt = c.Now
			tr.Reason = "provisioned"
			n.transition(api.StateProvisioned, tr, c.Policy.HistoryLimit)
		case api.OutcomeShutdown:
			n.FinishedAt = c.Now
			tr.Reason = "helper asked for shutdown"
			n.transition(api.StateShutdown, tr, c.Policy.HistoryLimit)
		case api.OutcomeDeferred:
			n.FinishedAt = c.Now
			n.NotBefore = c.Now.Add(c.Policy.BackoffBase)
			tr.Reason = "helper deferred"
			n.transition(api.StateDeferred, tr, c.Policy.HistoryLimit)
		case api.OutcomeFailed:
			retry(&n, tr, "failed", c.Now, c.Policy)
		case api.OutcomeUpgradeSent:
			n.LastError = ""
			retry(&n, tr, "upgrade sent", c.Now, c.Policy)
		case api.OutcomeLockHeld:
			// Another worker holds the node's lock: nobody may be offered it for a full window.
			n.LockEdge, n.LockUntil = "", time.Time{}
			retry(&n, tr, "provisioning lock held by another worker", c.Now, c.Policy)
			n.NotBefore = maxTime(n.NotBefore, c.Now.Add(c.Policy.LockWindow))
		}
		if err := t.putNode(old, &n); err != nil {
			return nil, storageError{err}
		}
		done[r.Identity] = true
		res.Accepted++
		res.Applied = append(res.Applied, r.Identity)
	}
	if res.Accepted > 0 {
		kept := ls.Nodes[:0]
		for _, id := range ls.Nodes {
			if !done[id] {
				kept = append(kept, id)
			}
		}
		ls.Nodes = kept
		if len(kept) == 0 {
			if err := t.leases.Delete([]byte(ls.ID)); err != nil {
				return nil, storageError{fmt.Errorf("delete lease %s: %w", ls.ID, err)}
			}
			res.LeaseDone = true
		} else if err := t.putLease(ls); err != nil {
			return nil, storageError{err}
		}
	}
	return res, nil
}

// retry counts an attempt and returns the node to waiting after its backoff, or abandons it.
func retry(n *Node, tr api.Transition, reason string, now time.Time, p Policy) {
	n.Attempts++
	tr.Reason = reason
	if n.Attempts >= p.MaxAttempts {
		n.FinishedAt = now
		tr.Reason = fmt.Sprintf("%s; abandoned after %d attempts", reason, n.Attempts)
		n.transition(api.StateAbandoned, tr, p.HistoryLimit)
		return
	}
	n.NotBefore = now.Add(p.backoff(n.Attempts))
	n.transition(api.StateWaiting, tr, p.HistoryLimit)
}

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
			n.LastError = "lease expired"
			// The edge may have called the node until the lease's end; go-choria keeps its lock a
			// full window after that call.
			n.LockEdge, n.LockUntil = ls.Edge, ls.ExpiresAt.Add(c.Policy.LockWindow)
			retry(&n, api.Transition{At: c.Now, Edge: ls.Edge, LeaseID: ls.ID, LeaseToken: ls.Token}, "lease expired", c.Now, c.Policy)
			if n.State == api.StateAbandoned {
				res.Abandoned++
			} else {
				res.Returned++
			}
			if err := t.putNode(old, &n); err != nil {
				return nil, storageError{err}
			}
		}
		if err := t.leases.Delete([]byte(ls.ID)); err != nil {
			return nil, storageError{fmt.Errorf("delete lease %s: %w", ls.ID, err)}
		}
		res.Expired = append(res.Expired, ls.ID)
	}
	return res, nil
}

func applyExtend(t *txn, c *Extend) (any, error) {
	if err := validNow(c.Now); err != nil {
		return nil, err
	}
	if c.By < 0 {
		return nil, errorf("extend by %s: must not be negative", c.By)
	}
	var all []*Lease
	err := t.leases.ForEach(func(k, v []byte) error {
		ls := &Lease{}
		if err := json.Unmarshal(v, ls); err != nil {
			return fmt.Errorf("decode lease %q: %w", k, err)
		}
		all = append(all, ls)
		return nil
	})
	if err != nil {
		return nil, storageError{err}
	}
	for _, ls := range all {
		ls.ExpiresAt = maxTime(ls.ExpiresAt, c.Now).Add(c.By)
		if err := t.putLease(ls); err != nil {
			return nil, storageError{err}
		}
	}
	return &ExtendResult{Extended: len(all)}, nil
}

func applyPause(t *txn, c *Pause) (any, error) {
	if err := validNow(c.Now); err != nil {
		return nil, err
	}
	p := PauseState{Paused: c.Paused, At: c.Now, By: c.By, Reason: c.Reason}
	v, err := json.Marshal(p)
	if err != nil {
		return nil, storageError{err}
	}
	if err := t.meta.Put(keyPause, v); err != nil {
		return nil, storageError{err}
	}
	t.pauseChanged = true
	return &p, nil
}

func readPause(meta *bolt.Bucket) (PauseState, error) {
	var p PauseState
	v := meta.Get(keyPause)
	if v == nil {
		return p, nil
	}
	if err := json.Unmarshal(v, &p); err != nil {
		return p, fmt.Errorf("decode pause flag: %w", err)
	}
	return p, nil
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func applyMember(t *txn, c *Member) (any, error) {
	if err := validID("member id", c.ID); err != nil {
		return nil, err
	}
	if c.Remove {
		if err := t.members.Delete([]byte(c.ID)); err != nil {
			return nil, storageError{err}
		}
		return c, nil
	}
	if len(c.APIAddress) > 1024 {
		return nil, errorf("member %s: api address longer than 1024 bytes", c.ID)
	}
	if err := t.members.Put([]byte(c.ID), []byte(c.APIAddress)); err != nil {
		return nil, storageError{err}
	}
	return c, nil
}
