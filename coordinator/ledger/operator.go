// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	bolt "go.etcd.io/bbolt"
)

// Operator verbs: each acts on named nodes that no lease holds, leaves a history entry naming who
// did it (forget leaves only the audit entry: the history goes with the node) and an audit entry.
const (
	VerbForget = "forget" // the node leaves the ledger (a decommissioned server)
	VerbBan    = "ban"    // the node is never offered to an edge until unbanned
	VerbUnban  = "unban"  // a banned node waits again, attempts reset
	VerbMove   = "move"   // the node changes region: the only way it does (register never moves it)
	// VerbApprove sends a held node to waiting (cluster protocol 8); with a Region, only one
	// still in that region (the leader selected it by it).
	VerbApprove = "approve"
)

// Verbs lists the operator verbs.
func Verbs() []string { return []string{VerbForget, VerbBan, VerbUnban, VerbMove, VerbApprove} }

// CheckOperator refuses an operator verb while the cluster protocol cannot apply it on every
// member, before the leader proposes anything.
func (l *Ledger) CheckOperator(verb string) error {
	cur, err := l.ClusterProtocol()
	if err != nil {
		return err
	}
	return checkOperator(cur, verb)
}

func checkOperator(cur int, verb string) error {
	need := operatorProtocol
	if verb == VerbApprove {
		need = approveProtocol
	}
	if cur < need {
		return fmt.Errorf("%w: %s needs cluster protocol %d; the cluster runs %d until every member is upgraded", ErrClusterProtocol, verb, need, cur)
	}
	return nil
}

// AuditMemory is how many operator actions the audit index keeps, newest first out last.
const AuditMemory = 10000

// Operator applies one verb to the named nodes; each node it may not act on is refused by name
// and left as it is.
type Operator struct {
	Now    time.Time `json:"now"`
	By     string    `json:"by"`
	Verb   string    `json:"verb"`
	Nodes  []string  `json:"nodes"`
	Region string    `json:"region,omitempty"` // move's new region; the region approve selected by
	Reason string    `json:"reason,omitempty"`
	Policy Policy    `json:"policy"`
}

// Type is the command's type byte.
func (Operator) Type() CommandType { return CmdOperator }

func (c Operator) stamp() time.Time { return c.Now }

// OperatorResult names the nodes an operator command acted on and those it refused.
type OperatorResult struct {
	Done     []string
	Rejected []Rejection
}

// AuditEntry is one operator action as the audit index keeps it.
type AuditEntry struct {
	At       time.Time     `json:"at"`
	By       string        `json:"by"`
	Verb     string        `json:"verb"`
	Identity string        `json:"identity"`
	Region   string        `json:"region"`
	From     api.NodeState `json:"from"`
	To       string        `json:"to,omitempty"` // the new region of a move
	Reason   string        `json:"reason,omitempty"`
}

func applyOperator(t *txn, c *Operator) (any, error) {
	if err := checkOperator(readProtocol(t.meta), c.Verb); err != nil {
		return nil, err
	}
	if err := validBatch(c.Now, c.Policy, len(c.Nodes), c.Verb, "nodes"); err != nil {
		return nil, err
	}
	if !slices.Contains(Verbs(), c.Verb) {
		return nil, errorf("operator verb %q: not one of %v", c.Verb, Verbs())
	}
	if err := validID("operator", c.By); err != nil {
		return nil, err
	}
	if c.Verb == VerbMove || (c.Verb == VerbApprove && c.Region != "") {
		if err := validID("region", c.Region); err != nil {
			return nil, err
		}
	}
	if len(c.Nodes) == 0 {
		return nil, errorf("%s names no node", c.Verb)
	}
	seen := make(map[string]bool, len(c.Nodes))
	for _, id := range c.Nodes {
		if err := validID("node identity", id); err != nil {
			return nil, err
		}
		if seen[id] {
			return nil, errorf("%s lists node %s twice", c.Verb, id)
		}
		seen[id] = true
	}
	res := &OperatorResult{}
	for _, id := range c.Nodes {
		old, err := getNode(t.nodes, id)
		if err != nil {
			return nil, storageError{err}
		}
		if err := operatorRefusal(t, old, id, c); err != nil {
			res.Rejected = append(res.Rejected, reject(id, err))
			continue
		}
		if err := t.operate(old, c); err != nil {
			return nil, storageError{err}
		}
		res.Done = append(res.Done, id)
	}
	return res, nil
}

// operatorRefusal is why verb c may not act on node id (record old), or nil.
func operatorRefusal(t *txn, old *Node, id string, c *Operator) error {
	switch {
	case old == nil:
		return fmt.Errorf("%w: %s", ErrUnknownNode, id)
	case old.State == api.StateLeased:
		return fmt.Errorf("%w: node %s is leased to edge %s under lease %s: a worker may be on it", ErrNodeBusy, id, old.Edge, old.LeaseID)
	}
	// A fenced node may still be acted on by its former lease's edge (fence.go): forgotten and
	// seen again, or unbanned, it could be offered to another edge meanwhile.
	if ls := fencedBy(t.fences, id); ls != "" && (c.Verb == VerbForget || c.Verb == VerbUnban || c.Verb == VerbApprove) {
		return fmt.Errorf("%w: node %s is fenced by lease %s until it ends (its edge may still count it held)", ErrNodeBusy, id, ls)
	}
	switch {
	case c.Verb == VerbForget && old.LockEdge != "" && old.LockUntil.After(c.Now):
		// The node's own lock holds another caller off until then; forgotten, a sighting would
		// queue it afresh for any edge, and the ledger's mirror of the lock would be gone.
		return fmt.Errorf("%w: node %s is in go-choria's provisioning lock of edge %s until %s; forget it after that", ErrNodeBusy, id, old.LockEdge, old.LockUntil.UTC().Format(time.RFC3339))
	case c.Verb == VerbForget && readProtocol(t.meta) >= heldLockProtocol && heldLockUntil(old, c.Policy).After(c.Now):
		// The same for a lock no edge of ours holds (a lock_held result): seen again after a
		// forget, the node would be offered at once, inside that lock. Refused rather than kept
		// across the forget, which would leave a record of a node the operator removed.
		return fmt.Errorf("%w: node %s is in go-choria's provisioning lock of another caller (lock_held) until %s; forget it after that", ErrNodeBusy, id, heldLockUntil(old, c.Policy).UTC().Format(time.RFC3339))
	case c.Verb == VerbBan && old.State == api.StateBanned:
		return fmt.Errorf("%w: node %s is banned already", ErrNodeBusy, id)
	case c.Verb == VerbUnban && old.State != api.StateBanned:
		return fmt.Errorf("%w: node %s is %s, not banned", ErrNodeBusy, id, old.State)
	case c.Verb == VerbMove && old.Region == c.Region:
		return fmt.Errorf("%w: node %s is in region %s already", ErrNodeBusy, id, c.Region)
	case c.Verb == VerbApprove && old.State != api.StateHeld:
		return fmt.Errorf("%w: node %s is %s, not held", ErrNodeBusy, id, old.State)
	case c.Verb == VerbApprove && c.Region != "" && old.Region != c.Region:
		return fmt.Errorf("%w: node %s is in region %s now, not %s", ErrNodeBusy, id, old.Region, c.Region)
	}
	return nil
}

// operate applies c's verb to old and records it in the audit index.
func (t *txn) operate(old *Node, c *Operator) error {
	entry := AuditEntry{At: c.Now, By: c.By, Verb: c.Verb, Identity: old.Identity, Region: old.Region, From: old.State, Reason: c.Reason}
	reason := c.Verb + " by " + c.By
	switch c.Verb {
	case VerbApprove:
		reason = fmt.Sprintf("approved by %s (held: %s)", c.By, old.HoldReason)
	case VerbMove:
		entry.To = c.Region
		reason = fmt.Sprintf("moved from %s to %s by %s", old.Region, c.Region, c.By)
	}
	if c.Reason != "" {
		reason += ": " + c.Reason
	}
	if c.Verb == VerbForget {
		if err := t.deleteNode(old); err != nil {
			return err
		}
		if err := t.noteEvent(api.Event{Kind: api.EventForgotten, At: c.Now, Identity: old.Identity, Region: old.Region, From: old.State, Reason: reason}); err != nil {
			return err
		}
		return t.audit(entry)
	}
	n := *old
	n.History = slices.Clone(old.History)
	tr := Transition{At: c.Now, Reason: reason}
	restore := readProtocol(t.meta) >= unbanRestoreProtocol
	switch c.Verb {
	case VerbBan:
		n.FinishedAt = c.Now
		if restore {
			n.PriorState = old.State
		}
		n.transition(api.StateBanned, tr, c.Policy.HistoryLimit)
	case VerbUnban:
		if restore {
			// Unban undoes the ban: the node is what it was, its attempts, backoff and lock
			// included (retry is the verb that gives it another chance). A provisioned node sent
			// back to waiting would be offered although it left provisioning mode.
			n.PriorState = ""
			n.transition(priorState(old), tr, c.Policy.HistoryLimit)
			break
		}
		// The older rule, as the operator's retry: attempts reset, no backoff, lock kept.
		n.Attempts, n.LastError = 0, ""
		n.NotBefore = maxTime(old.NotBefore, c.Now)
		n.transition(api.StateWaiting, tr, c.Policy.HistoryLimit)
	case VerbMove:
		n.Region = c.Region
		if readProtocol(t.meta) >= lateMoveProtocol {
			// A late result of a lease granted before the move names the region it was
			// granted in (grantRegion).
			tr.FromRegion = old.Region
		}
		n.transition(old.State, tr, c.Policy.HistoryLimit)
	case VerbApprove:
		approve(&n, old, tr, c.Policy)
	}
	if err := t.putNode(old, &n); err != nil {
		return err
	}
	return t.audit(entry)
}

// bannable reports whether a ban may find a node in state s: not leased (a worker may be on it)
// and not banned.
func bannable(s api.NodeState) bool {
	switch s {
	case api.StateWaiting, api.StateProvisioned, api.StateDeferred, api.StateShutdown, api.StateAbandoned, api.StateGone, api.StateHeld:
		return true
	}
	return false
}

// approve sends held node old to waiting as n, a fresh start (attempts and error cleared, the
// hold's record gone), but not inside go-choria's lock: LockEdge and LockUntil stay, so only
// that edge is offered the node within its window, and the window of a lock_held result keeps
// it from every edge, as retry keeps them.
func approve(n, old *Node, tr Transition, p Policy) {
	n.Attempts, n.LastError = 0, ""
	n.HoldReason, n.HeldAt, n.HoldEdge, n.HoldDetail = "", time.Time{}, "", ""
	n.NotBefore = maxTime(maxTime(old.NotBefore, tr.At), heldLockUntil(old, p))
	n.transition(api.StateWaiting, tr, p.HistoryLimit)
}

// priorState is the state banned node n had when it was banned: its record's PriorState, or for
// a node banned below unbanRestoreProtocol the state its ban's history entry left, or waiting
// when its history no longer holds that entry (what unban did before).
func priorState(n *Node) api.NodeState {
	if bannable(n.PriorState) {
		return n.PriorState
	}
	for _, tr := range slices.Backward(n.History) {
		if tr.To == api.StateBanned && tr.From != api.StateBanned {
			if bannable(tr.From) {
				return tr.From
			}
			break
		}
	}
	return api.StateWaiting
}

// deleteNode removes old from the ledger with its waiting entry and count.
func (t *txn) deleteNode(old *Node) error {
	if old.State == api.StateWaiting {
		if err := t.waiting.Delete(waitKey(old)); err != nil {
			return fmt.Errorf("unindex node %q: %w", old.Identity, err)
		}
	}
	t.deltas[string(countKey(old.Region, old.State))]--
	if err := t.indexHeld(old, nil); err != nil {
		return err
	}
	if err := t.nodes.Delete([]byte(old.Identity)); err != nil {
		return fmt.Errorf("delete node %q: %w", old.Identity, err)
	}
	return nil
}

// audit appends e to the audit index under this command's log index and position (as failures
// are keyed, so every member holds the same entries under the same keys); the transaction keeps
// the newest AuditMemory when it finishes.
func (t *txn) audit(e AuditEntry) error {
	v, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode audit entry: %w", err)
	}
	key := logKey(t.index, t.auditPos)
	t.auditPos++
	t.audits++
	if err := t.auditLog.Put(key, v); err != nil {
		return fmt.Errorf("store audit entry: %w", err)
	}
	return nil
}

// Audit returns up to limit of the newest operator actions, newest first.
func (l *Ledger) Audit(limit int) ([]AuditEntry, error) {
	var out []AuditEntry
	err := l.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketAudit).Cursor()
		for k, v := c.Last(); k != nil && len(out) < limit; k, v = c.Prev() {
			var e AuditEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("decode audit entry: %w", err)
			}
			out = append(out, e)
		}
		return nil
	})
	return out, err
}
