// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"fmt"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

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
