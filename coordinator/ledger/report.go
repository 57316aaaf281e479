// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	bolt "go.etcd.io/bbolt"
)

// applyReport validates a report, answers a retry of one already applied with its recorded
// outcomes, and otherwise applies each result to its node and records the answer.
func applyReport(t *txn, c *Report) (any, error) {
	if err := validBatch(c.Now, c.Policy, len(c.Results), "report", "results"); err != nil {
		return nil, err
	}
	for _, r := range c.Results {
		if !r.Outcome.Valid() {
			return nil, errorf("node %s: unknown outcome %q", r.Identity, r.Outcome)
		}
	}
	if err := checkOutcomes(readProtocol(t.meta), c.Results); err != nil {
		return nil, err
	}
	if c.RequestID != "" {
		if err := validID("report request id", c.RequestID); err != nil {
			return nil, err
		}
		if c.Keep < 0 {
			return nil, errorf("report keep %s: must not be negative", c.Keep)
		}
		if prev, err := getReport(t.reports, c.LeaseID, c.RequestID); err != nil {
			return nil, storageError{err}
		} else if prev != nil {
			return replayReport(prev, c)
		}
	}
	ls, err := checkLease(t, c.LeaseID, c.Token, c.Edge, c.Region)
	if errors.Is(err, ErrUnknownLease) {
		return applyEndedLeaseReport(t, c, err)
	}
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
		if rej := reportRefusal(old, r.Identity, ls); rej != nil {
			if errors.Is(rej, ErrNotInLease) {
				var fatal error
				if rej, fatal = tryLate(t, old, r, rej, ls.ID, ls.Token, ls.Edge, ls.Region, c); fatal != nil {
					return nil, fatal
				}
			}
			res.note(r.Identity, rej)
			continue
		}
		n := *old
		applyOutcome(&n, r, ls, c.Now, c.Policy, readProtocol(t.meta))
		if err := t.putNode(old, &n); err != nil {
			return nil, storageError{err}
		}
		if n.State == api.StateHeld {
			if err := t.auditHold(&n, old.State); err != nil {
				return nil, storageError{err}
			}
		}
		if failureOutcome(r.Outcome) {
			if err := t.noteFailure(&n); err != nil {
				return nil, storageError{err}
			}
		}
		done[r.Identity] = true
		res.note(r.Identity, nil)
	}
	if err := finishLeaseNodes(t, ls, done, res); err != nil {
		return nil, err
	}
	if c.RequestID != "" {
		if err := t.recordReport(c, ls, res); err != nil {
			return nil, storageError{err}
		}
	}
	return res, nil
}

// tryLate applies r as a late result of lease id and token (edge, region) when its outcome may
// arrive late; otherwise, or when the node's history does not vouch for it, r stays refused
// (refusal, or applyLate's reason). A storage failure aborts the command (fatal).
func tryLate(t *txn, old *Node, r Result, refusal error, id string, token uint64, edge, region string, c *Report) (rejected, fatal error) {
	if !lateOutcome(r.Outcome) {
		return refusal, nil
	}
	err := applyLate(t, old, r, id, token, edge, region, c.Now, c.Policy)
	if se, ok := err.(storageError); ok {
		return nil, se
	}
	return err, nil
}

// note counts the result of id as applied (rej nil) or refused for rej.
func (res *ReportResult) note(id string, rej error) {
	if rej != nil {
		res.Rejected = append(res.Rejected, reject(id, rej))
		return
	}
	res.Accepted++
	res.Applied = append(res.Applied, id)
}

// applyEndedLeaseReport applies the late provisioned and shutdown results of a report whose lease
// has ended (expired or finished); leaseErr is why the lease was refused. A report with none to
// apply is refused with leaseErr as before, so every other outcome of an ended lease stays stale.
func applyEndedLeaseReport(t *txn, c *Report, leaseErr error) (any, error) {
	res := &ReportResult{}
	for _, r := range c.Results {
		old, err := getNode(t.nodes, r.Identity)
		if err != nil {
			return nil, storageError{err}
		}
		rej, fatal := tryLate(t, old, r, leaseErr, c.LeaseID, c.Token, c.Edge, c.Region, c)
		if fatal != nil {
			return nil, fatal
		}
		res.note(r.Identity, rej)
	}
	if res.Accepted == 0 {
		return nil, leaseErr
	}
	if c.RequestID != "" {
		ended := &Lease{ID: c.LeaseID, Token: c.Token, Edge: c.Edge, Region: c.Region}
		if err := t.recordReport(c, ended, res); err != nil {
			return nil, storageError{err}
		}
	}
	return res, nil
}

// reportRefusal is why a result for node id (record old) may not be applied under ls, or nil.
func reportRefusal(old *Node, id string, ls *Lease) error {
	switch {
	case old == nil:
		return fmt.Errorf("%w: %s", ErrUnknownNode, id)
	case old.Region != ls.Region:
		return fmt.Errorf("%w: node %s is in region %s, lease %s is for %s", ErrWrongRegion, id, old.Region, ls.ID, ls.Region)
	case old.State != api.StateLeased || old.LeaseID != ls.ID || old.LeaseToken != ls.Token:
		return fmt.Errorf("%w: node %s, lease %s token %d", ErrNotInLease, id, ls.ID, ls.Token)
	}
	return nil
}

// applyOutcome is the state machine of one reported result: it moves node n out of lease ls.
func applyOutcome(n *Node, r Result, ls *Lease, now time.Time, p Policy, proto int) {
	tr := Transition{At: now, Edge: ls.Edge, LeaseID: ls.ID, LeaseToken: ls.Token, Error: r.Error}
	if r.InventoryVersion != "" {
		n.InventoryVersion = r.InventoryVersion
	}
	if r.TargetVersion != "" {
		n.TargetVersion = r.TargetVersion
	}
	n.LeaseID, n.LeaseToken = "", 0
	n.LastError = r.Error
	// The edge held go-choria's lock until now; only it may be offered the node within the window.
	n.LockEdge, n.LockUntil = ls.Edge, now.Add(p.LockWindow)
	switch r.Outcome {
	case api.OutcomeProvisioned:
		n.FinishedAt = now
		tr.Reason = "provisioned"
		n.transition(api.StateProvisioned, tr, p.HistoryLimit)
	case api.OutcomeShutdown:
		n.FinishedAt = now
		tr.Reason = "helper asked for shutdown"
		n.transition(api.StateShutdown, tr, p.HistoryLimit)
	case api.OutcomeDeferred:
		n.FinishedAt = now
		n.NotBefore = now.Add(p.BackoffBase)
		tr.Reason = "helper deferred"
		n.transition(api.StateDeferred, tr, p.HistoryLimit)
	case api.OutcomeFailed:
		if proto >= duplicateHoldProtocol && strings.HasPrefix(r.Error, api.DuplicateResponderPrefix) {
			// Two machines answer to this identity: which one gets credentials is for a person
			// to decide. The lock window stays the edge's, as for any result.
			n.hold(tr, "failed", api.HoldDuplicateResponder, "", p.HistoryLimit)
			n.HoldDetail = r.Error
			return
		}
		retry(n, tr, "failed", now, p)
	case api.OutcomeUpgradeSent:
		n.LastError = ""
		retry(n, tr, "upgrade sent", now, p)
	case api.OutcomeLockHeld:
		// Another worker holds the node's lock: nobody may be offered it for a full window. From
		// heldLockProtocol the window is also a lock no edge holds, which retry and forget keep
		// (heldLockUntil); not_before alone is what every build writes.
		n.LockEdge, n.LockUntil = "", time.Time{}
		if proto >= heldLockProtocol {
			n.LockUntil = now.Add(p.LockWindow)
		}
		retry(n, tr, lockHeldReason, now, p)
		n.NotBefore = maxTime(n.NotBefore, now.Add(p.LockWindow))
	case api.OutcomeReleased:
		// The edge gave the node back without a failure of the node's own (the operator paused,
		// or the edge stopped before touching it): no attempt, no backoff. The ledger cannot know
		// whether the edge called the node, so the lock window stays with that edge as above.
		n.NotBefore = maxTime(n.NotBefore, now)
		tr.Reason = "released by the edge"
		n.transition(api.StateWaiting, tr, p.HistoryLimit)
	case api.OutcomeGone:
		// The node left provisioning mode under an earlier lease whose result never arrived:
		// offering it again would only spend attempts on a machine that no longer answers.
		// Final, without an attempt, until discovery sees it in provisioning mode again.
		n.FinishedAt = now
		if prior := staleRequeue(n, ls, proto); prior != "" {
			tr.Reason = fmt.Sprintf("%s: the sighting that queued it again was stale; %s stands", goneReason, prior)
			n.transition(prior, tr, p.HistoryLimit)
			return
		}
		tr.Reason = goneReason
		n.transition(api.StateGone, tr, p.HistoryLimit)
	}
}

// staleRequeue is the final state (provisioned or shut down) a node had when a sighting queued it
// again right before lease ls was granted it, or "": then a gone result of ls means the sighting
// was stale (made before that result and delivered after it: an edge stopped between its
// freshness check and its send), and the recorded result is still the node's. Without this, such
// a node would be recorded gone (the chaos suite's "lost") though nothing happened to it.
func staleRequeue(n *Node, ls *Lease, proto int) api.NodeState {
	if proto < staleSightingProtocol {
		return ""
	}
	h := n.History
	for i := len(h) - 1; i > 0; i-- {
		if h[i].To != api.StateLeased || h[i].LeaseID != ls.ID || h[i].LeaseToken != ls.Token {
			continue
		}
		prev := h[i-1]
		if prev.To == api.StateWaiting && prev.Reason == seenAgainReason && (prev.From == api.StateProvisioned || prev.From == api.StateShutdown) {
			return prev.From
		}
		return ""
	}
	return ""
}

// lockHeldReason is a lock_held result's history reason (a reason code: codec.go); abandoning
// the node appends the attempts to it.
const lockHeldReason = "provisioning lock held by another worker"

// goneReason is spelled out in the record rather than given a reason code (codec.go): a member of
// the previous build that installs a newer member's snapshot during a rolling restart then still
// decodes the record instead of halting on an unknown code.
const goneReason = "found out of provisioning mode"

// finishLeaseNodes drops the reported nodes from the lease, and the lease once it holds none and
// fences none.
func finishLeaseNodes(t *txn, ls *Lease, done map[string]bool, res *ReportResult) error {
	if res.Accepted == 0 {
		return nil
	}
	kept := ls.Nodes[:0]
	for _, id := range ls.Nodes {
		if !done[id] {
			kept = append(kept, id)
		}
	}
	ls.Nodes = kept
	// A lease that still fences a node is kept until it expires (fence.go).
	if len(kept) > 0 || len(ls.Fenced) > 0 {
		if err := t.putLease(ls); err != nil {
			return storageError{err}
		}
		return nil
	}
	if err := t.leases.Delete([]byte(ls.ID)); err != nil {
		return storageError{fmt.Errorf("delete lease %s: %w", ls.ID, err)}
	}
	res.LeaseDone = true
	return nil
}

// retry counts an attempt and returns the node to waiting after its backoff, or abandons it.
func retry(n *Node, tr Transition, reason string, now time.Time, p Policy) {
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

// reportRecord is the answer of an applied report, kept for Keep so a retry gets it again.
type reportRecord struct {
	At       time.Time   `json:"at"`
	Token    uint64      `json:"token"`
	Edge     string      `json:"edge"`
	Region   string      `json:"region"`
	Applied  []string    `json:"applied"`
	Rejected []Rejection `json:"rejected,omitempty"`
	Done     bool        `json:"done,omitempty"`
}

func reportKey(leaseID, requestID string) []byte {
	return append(append([]byte(leaseID), 0), requestID...)
}

func getReport(b *bolt.Bucket, leaseID, requestID string) (*reportRecord, error) {
	v := b.Get(reportKey(leaseID, requestID))
	if v == nil {
		return nil, nil
	}
	rec := &reportRecord{}
	if err := json.Unmarshal(v, rec); err != nil {
		return nil, fmt.Errorf("decode report %s of lease %s: %w", requestID, leaseID, err)
	}
	return rec, nil
}

// replayReport answers a retried report with the recorded outcomes, if it is the same caller's.
func replayReport(prev *reportRecord, c *Report) (any, error) {
	switch {
	case prev.Token != c.Token:
		return nil, fmt.Errorf("%w: lease %s was reported under token %d, request carries %d", ErrTokenMismatch, c.LeaseID, prev.Token, c.Token)
	case c.Edge != "" && c.Edge != prev.Edge:
		return nil, fmt.Errorf("%w: lease %s is held by edge %s, request comes from %s", ErrWrongEdge, c.LeaseID, prev.Edge, c.Edge)
	case c.Region != "" && c.Region != prev.Region:
		return nil, fmt.Errorf("%w: lease %s is for region %s, request names %s", ErrWrongRegion, c.LeaseID, prev.Region, c.Region)
	}
	return &ReportResult{Accepted: len(prev.Applied), Applied: prev.Applied, Rejected: prev.Rejected, LeaseDone: prev.Done, Replayed: true}, nil
}

// recordReport keeps the answer of report c for c.Keep and forgets the records older than that.
func (t *txn) recordReport(c *Report, ls *Lease, res *ReportResult) error {
	rec := reportRecord{At: c.Now, Token: ls.Token, Edge: ls.Edge, Region: ls.Region, Applied: res.Applied, Rejected: res.Rejected, Done: res.LeaseDone}
	if rec.Applied == nil {
		rec.Applied = []string{}
	}
	v, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode report record: %w", err)
	}
	return t.remember(reportKey(c.LeaseID, c.RequestID), v, c.Now, c.Keep)
}

// remember stores an answer under key in the reports bucket, as of now, and forgets every
// answer older than keep. Answers are indexed by time, so forgetting reads only the expired prefix.
func (t *txn) remember(key, v []byte, now time.Time, keep time.Duration) error {
	if err := t.reports.Put(key, v); err != nil {
		return fmt.Errorf("store answer record: %w", err)
	}
	if err := t.reportTimes.Put(append(binary.BigEndian.AppendUint64(nil, uint64(max(now.UnixNano(), 0))), key...), nil); err != nil {
		return fmt.Errorf("index answer record: %w", err)
	}
	cutoff := uint64(max(now.Add(-keep).UnixNano(), 0))
	cur := t.reportTimes.Cursor()
	for k, _ := cur.First(); len(k) >= 8 && binary.BigEndian.Uint64(k[:8]) < cutoff; k, _ = cur.First() {
		// A copy: the cursor's key lives in pages the deletes below may rewrite.
		k = bytes.Clone(k)
		if err := t.reports.Delete(k[8:]); err != nil {
			return fmt.Errorf("forget answer record: %w", err)
		}
		if err := t.reportTimes.Delete(k); err != nil {
			return fmt.Errorf("forget answer record: %w", err)
		}
	}
	return nil
}
