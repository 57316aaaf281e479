// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	bolt "go.etcd.io/bbolt"
)

// retryReason is spelled out in the record, not given a reason code (codec.go), so a member of
// the previous build that installs a newer member's snapshot still decodes it.
const retryReason = "retried by the operator"

func applyRetry(t *txn, c *Retry) (any, error) {
	// First: a member of the build before retry halted here, whatever the command held.
	if err := checkRetry(readProtocol(t.meta)); err != nil {
		return nil, err
	}
	if err := validBatch(c.Now, c.Policy, len(c.Nodes), "retry", "nodes"); err != nil {
		return nil, err
	}
	if len(c.Nodes) == 0 {
		return nil, errorf("retry names no node")
	}
	proto := readProtocol(t.meta)
	if c.State != "" && !slices.Contains(retryableStates(proto), c.State) {
		return nil, errorf("retry from state %q: only %v are retried", c.State, retryableStates(proto))
	}
	seen := make(map[string]struct{}, len(c.Nodes))
	for _, id := range c.Nodes {
		if err := validID("node identity", id); err != nil {
			return nil, err
		}
		if _, dup := seen[id]; dup {
			return nil, errorf("retry lists node %s twice", id)
		}
		seen[id] = struct{}{}
	}
	var prev []RetriedNode
	var done map[string]RetriedNode
	if c.RequestID != "" {
		if err := validID("retry request id", c.RequestID); err != nil {
			return nil, err
		}
		if c.Keep < 0 {
			return nil, errorf("retry keep %s: must not be negative", c.Keep)
		}
		var err error
		if prev, err = getRetried(t.reports, c.RequestID); err != nil {
			return nil, storageError{err}
		}
		done = make(map[string]RetriedNode, len(prev))
		for _, n := range prev {
			done[n.Identity] = n
		}
	}
	res := &RetryResult{}
	reason := retryReason
	if c.By != "" && c.By != "operator" {
		reason += " (" + c.By + ")"
	}
	var moved []RetriedNode
	for _, id := range c.Nodes {
		if n, ok := done[id]; ok {
			// This request moved it already (its answer was lost and it came again).
			res.Retried = append(res.Retried, n)
			continue
		}
		old, err := getNode(t.nodes, id)
		if err != nil {
			return nil, storageError{err}
		}
		if err := retryRefusal(old, id, c.Region, c.State, proto); err != nil {
			res.Rejected = append(res.Rejected, reject(id, err))
			continue
		}
		moved = append(moved, RetriedNode{Identity: id, Region: old.Region, From: old.State, Attempts: old.Attempts, LastError: old.LastError})
		res.Retried = append(res.Retried, moved[len(moved)-1])
		n := *old
		n.History = append([]Transition(nil), old.History...)
		n.Attempts = 0
		n.LastError = ""
		// The operator skips a deferral or a backoff, not go-choria's lock, which the node itself
		// enforces: LockEdge and LockUntil stay, and so does the window of a lock_held result,
		// which lives in NotBefore (applyOutcome). An abandoned node has no backoff (retry()
		// abandons without one), so its NotBefore is ahead of now only for that window; every
		// build writes it the same way, so every member keeps the same window. A waiting node's
		// NotBefore is its backoff too, so from heldLockProtocol the window is read apart.
		n.NotBefore = c.Now
		if old.State == api.StateAbandoned {
			n.NotBefore = maxTime(old.NotBefore, c.Now)
		}
		if proto >= heldLockProtocol {
			n.NotBefore = maxTime(n.NotBefore, heldLockUntil(old, c.Policy))
		}
		n.transition(api.StateWaiting, Transition{At: c.Now, Reason: reason}, c.Policy.HistoryLimit)
		if err := t.putNode(old, &n); err != nil {
			return nil, storageError{err}
		}
	}
	if c.RequestID != "" && len(moved) > 0 {
		if err := t.recordRetried(c, prev, moved); err != nil {
			return nil, storageError{err}
		}
	}
	return res, nil
}

// heldLockUntil is when the window of the last lock_held result of node n ends (zero if it had
// none): go-choria's lock then belongs to a caller the ledger does not know, and no edge may be
// offered the node before. From heldLockProtocol the record holds it as a lock without an edge;
// a result recorded before holds it only in not_before, where a backoff is indistinguishable
// from it, so it is read from the result's history entry (the window is counted from that
// result whatever the ledger did since: the other caller's lock does not end earlier).
func heldLockUntil(n *Node, p Policy) time.Time {
	if n.LockEdge == "" && !n.LockUntil.IsZero() {
		return n.LockUntil
	}
	for _, tr := range slices.Backward(n.History) {
		if strings.HasPrefix(tr.Reason, lockHeldReason) {
			return tr.At.Add(p.LockWindow)
		}
	}
	return time.Time{}
}

// retriedRecord is what one retry request moved so far, over all of its commands, by identity.
type retriedRecord struct {
	Nodes []RetriedNode `json:"nodes"`
}

// retryKey keeps retry records apart from reports' (lease id 0x00 request id) in one bucket:
// no lease id is empty.
func retryKey(requestID string) []byte { return reportKey("", requestID) }

func getRetried(b *bolt.Bucket, requestID string) ([]RetriedNode, error) {
	v := b.Get(retryKey(requestID))
	if v == nil {
		return nil, nil
	}
	var rec retriedRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return nil, fmt.Errorf("decode retry record %s: %w", requestID, err)
	}
	return rec.Nodes, nil
}

// recordRetried adds moved to what request c.RequestID moved before (prev), kept for c.Keep.
func (t *txn) recordRetried(c *Retry, prev, moved []RetriedNode) error {
	rec := retriedRecord{Nodes: append(slices.Clone(prev), moved...)}
	slices.SortFunc(rec.Nodes, func(a, b RetriedNode) int { return strings.Compare(a.Identity, b.Identity) })
	v, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode retry record: %w", err)
	}
	return t.remember(retryKey(c.RequestID), v, c.Now, c.Keep)
}

// RetriedBy lists the nodes the operator's retry requestID moved, while its record is kept.
func (l *Ledger) RetriedBy(requestID string) ([]RetriedNode, error) {
	var out []RetriedNode
	err := l.view(func(tx *bolt.Tx) error {
		var err error
		out, err = getRetried(tx.Bucket(bucketReports), requestID)
		return err
	})
	return out, err
}

// retryableStates are the states a retry moves nodes from at cluster protocol proto.
func retryableStates(proto int) []api.NodeState {
	if proto < retryFailedProtocol {
		return slices.DeleteFunc(api.RetryableStates(), func(s api.NodeState) bool { return s == api.StateWaiting })
	}
	return api.RetryableStates()
}

// retryRefusal is why node id (record old) may not be retried at cluster protocol proto, or
// nil; region and state, when set, are what the leader selected it by.
func retryRefusal(old *Node, id, region string, state api.NodeState, proto int) error {
	switch {
	case old == nil:
		return fmt.Errorf("%w: %s", ErrUnknownNode, id)
	case old.State == api.StateLeased:
		return fmt.Errorf("%w: node %s is leased to edge %s under lease %s: a worker may be on it", ErrNotRetryable, id, old.Edge, old.LeaseID)
	case old.State == api.StateHeld:
		return fmt.Errorf("%w: node %s is held (%s) for an operator's approve, which is the verb that lets it be provisioned", ErrNotRetryable, id, old.HoldReason)
	case !slices.Contains(retryableStates(proto), old.State):
		return fmt.Errorf("%w: node %s is %s; only %v nodes are retried", ErrNotRetryable, id, old.State, retryableStates(proto))
	case old.State == api.StateWaiting && old.Attempts == 0:
		return fmt.Errorf("%w: node %s is waiting and has not failed: it has nothing to retry", ErrNotRetryable, id)
	case state != "" && old.State != state:
		return fmt.Errorf("%w: node %s is %s now, not %s", ErrNotRetryable, id, old.State, state)
	case region != "" && old.Region != region:
		return fmt.Errorf("%w: node %s is in region %s now, not %s", ErrNotRetryable, id, old.Region, region)
	}
	return nil
}

// RetrySelection is what an operator asks to retry: the named Nodes, or up to Limit nodes of
// Region in State.
type RetrySelection struct {
	Nodes  []string
	Region string
	State  api.NodeState
	Limit  int
}

// RetryPlan is what a retry would move now, in order; More says the region holds more than Limit.
type RetryPlan struct {
	Nodes []RetriedNode
	More  bool
}

// maxRefusalsNamed bounds the refusals one error message lists.
const maxRefusalsNamed = 10

// PlanRetry reads what a retry of sel would move, before anything is proposed: a named node that
// may not be retried refuses the whole request (each such node named, up to ten), and a region
// with no node at all is unknown. The ledger checks each node again when the retry applies.
func (l *Ledger) PlanRetry(sel RetrySelection) (RetryPlan, error) {
	if len(sel.Nodes) > 0 {
		return l.planNamed(sel.Nodes)
	}
	var plan RetryPlan
	if sel.Limit <= 0 {
		sel.Limit = api.MaxRetryNodes
	}
	counts, err := l.Counts()
	if err != nil {
		return plan, err
	}
	if _, ok := counts[sel.Region]; !ok {
		return plan, fmt.Errorf("%w: no node of the ledger is in region %q", ErrUnknownRegion, sel.Region)
	}
	if counts[sel.Region][sel.State] == 0 {
		return plan, nil
	}
	f := NodeFilter{Region: sel.Region, State: sel.State, Limit: MaxBatch}
	for {
		page, next, err := l.Nodes(f)
		if err != nil {
			return plan, err
		}
		for _, n := range page {
			if n.State == api.StateWaiting && n.Attempts == 0 {
				continue // waiting without a failure: nothing to retry
			}
			if len(plan.Nodes) == sel.Limit {
				plan.More = true
				return plan, nil
			}
			plan.Nodes = append(plan.Nodes, RetriedNode{Identity: n.Identity, Region: n.Region, From: n.State, Attempts: n.Attempts, LastError: n.LastError})
		}
		if next == "" {
			return plan, nil
		}
		f.After = next
	}
}

func (l *Ledger) planNamed(ids []string) (RetryPlan, error) {
	var plan RetryPlan
	proto, err := l.ClusterProtocol()
	if err != nil {
		return plan, err
	}
	var refusals []string
	var first, sentinel error
	err = l.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketNodes)
		for _, id := range ids {
			n, err := getNode(b, id)
			if err != nil {
				return err
			}
			if rerr := retryRefusal(n, id, "", "", proto); rerr != nil {
				if first == nil {
					first = rerr
				}
				// A request naming a node that exists but may not move is a conflict; one
				// naming only unknown nodes is not found.
				if sentinel != ErrNotRetryable {
					sentinel = ErrUnknownNode
					if errors.Is(rerr, ErrNotRetryable) {
						sentinel = ErrNotRetryable
					}
				}
				refusals = append(refusals, rerr.Error())
				continue
			}
			plan.Nodes = append(plan.Nodes, RetriedNode{Identity: id, Region: n.Region, From: n.State, Attempts: n.Attempts, LastError: n.LastError})
		}
		return nil
	})
	if err != nil {
		return RetryPlan{}, err
	}
	if first != nil {
		refused, more := len(refusals), ""
		if len(refusals) > maxRefusalsNamed {
			more = fmt.Sprintf("; and %d more", len(refusals)-maxRefusalsNamed)
			refusals = refusals[:maxRefusalsNamed]
		}
		return RetryPlan{}, &planError{msg: fmt.Sprintf("retry refused for %d of %d nodes, nothing moved: %s%s", refused, len(ids), strings.Join(refusals, "; "), more), err: sentinel}
	}
	return plan, nil
}

// planError carries every refusal in its message and, for errors.Is, ErrNotRetryable when a named
// node exists but may not move, else ErrUnknownNode.
type planError struct {
	msg string
	err error
}

func (e *planError) Error() string { return e.msg }
func (e *planError) Unwrap() error { return e.err }
