// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	bolt "go.etcd.io/bbolt"
)

// FailureMemory is how many failures the index keeps. It is part of the ledger's content (every
// member keeps the same ones), so it is a constant, not configuration.
const FailureMemory = api.MaxFailures

// Failure is one entry of the recent failures index: an attempt that failed (failed, lock held,
// lease expired; abandoned when it was the last) or a node found gone.
type Failure struct {
	At       time.Time     `json:"at"`
	Identity string        `json:"identity"`
	Region   string        `json:"region"`
	Edge     string        `json:"edge,omitempty"`
	LeaseID  string        `json:"lease_id,omitempty"`
	State    api.NodeState `json:"state"`
	Attempts int           `json:"attempts,omitempty"`
	Reason   string        `json:"reason"`
	Error    string        `json:"error,omitempty"`
}

// noteFailure records the transition node n just made (its last history entry) in the failure
// index, in the same transaction, and forgets the entries older than the newest FailureMemory.
// Entries are numbered in apply order, so every member keeps the same ones under the same keys.
func (t *txn) noteFailure(n *Node) error {
	tr := n.History[len(n.History)-1]
	f := Failure{At: tr.At, Identity: n.Identity, Region: n.Region, Edge: tr.Edge, LeaseID: tr.LeaseID,
		State: n.State, Attempts: n.Attempts, Reason: tr.Reason, Error: n.LastError}
	v, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("encode failure of %s: %w", n.Identity, err)
	}
	seq := getUint(t.meta.Get(keyFailureSeq)) + 1
	if err := t.meta.Put(keyFailureSeq, putUint(seq)); err != nil {
		return fmt.Errorf("store failure sequence: %w", err)
	}
	if err := t.failures.Put(putUint(seq), v); err != nil {
		return fmt.Errorf("store failure of %s: %w", n.Identity, err)
	}
	if seq <= FailureMemory {
		return nil
	}
	// Normally exactly one entry falls out; the loop also trims an index kept longer before.
	cut := putUint(seq - FailureMemory)
	c := t.failures.Cursor()
	for k, _ := c.First(); k != nil && bytes.Compare(k, cut) <= 0; k, _ = c.First() {
		if err := t.failures.Delete(bytes.Clone(k)); err != nil {
			return fmt.Errorf("forget failure %d: %w", binary.BigEndian.Uint64(k), err)
		}
	}
	return nil
}

// failureOutcome reports whether a result with outcome o, once applied, is a failure to record.
func failureOutcome(o api.Outcome) bool {
	return o == api.OutcomeFailed || o == api.OutcomeLockHeld || o == api.OutcomeGone
}

// Failures returns up to limit recent failures, newest first (api.DefaultFailures when limit is
// 0, at most FailureMemory). It reads only the index, never a node record, so its cost does not
// depend on the size of the ledger.
func (l *Ledger) Failures(limit int) ([]Failure, error) {
	if limit <= 0 {
		limit = api.DefaultFailures
	}
	limit = min(limit, FailureMemory)
	out := []Failure{}
	err := l.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketFailures).Cursor()
		for k, v := c.Last(); k != nil && len(out) < limit; k, v = c.Prev() {
			var f Failure
			if err := json.Unmarshal(v, &f); err != nil {
				return fmt.Errorf("decode failure %d: %w", getUint(k), err)
			}
			out = append(out, f)
		}
		return nil
	})
	return out, err
}
