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
// index, in the same transaction. The key is the raft index of the command being applied and the
// failure's position within it, so every member keeps the same entries under the same keys
// however late it started recording; finish trims the index to the newest FailureMemory.
func (t *txn) noteFailure(n *Node) error {
	tr := n.History[len(n.History)-1]
	f := Failure{At: tr.At, Identity: n.Identity, Region: n.Region, Edge: tr.Edge, LeaseID: tr.LeaseID,
		State: n.State, Attempts: n.Attempts, Reason: tr.Reason, Error: n.LastError}
	v, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("encode failure of %s: %w", n.Identity, err)
	}
	k := logKey(t.index, t.failurePos)
	t.failurePos++
	if err := t.failures.Put(k, v); err != nil {
		return fmt.Errorf("store failure of %s: %w", n.Identity, err)
	}
	t.failuresNoted = true
	return nil
}

// logKey is index (8B BE) then pos (4B BE), the key of the failure, audit and event indexes:
// their order is apply order. One command records at most MaxBatch leases of MaxBatch nodes,
// well inside 32 bits.
func logKey(index uint64, pos uint32) []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(make([]byte, 0, failureKeyLen), index), pos)
}

const failureKeyLen = 12

// describeFailureKey names an entry of the failure index in an error.
func describeFailureKey(k []byte) string {
	if len(k) != failureKeyLen {
		return fmt.Sprintf("key %x", k)
	}
	return fmt.Sprintf("%d.%d", binary.BigEndian.Uint64(k[:8]), binary.BigEndian.Uint32(k[8:]))
}

// trimFailures deletes every entry older than the newest FailureMemory. It runs once per
// transaction: the result is the same as trimming after each failure, whatever the batch.
func trimFailures(b *bolt.Bucket) error { return keepNewest(b, FailureMemory, "failure") }

// keepNewest deletes every entry of b, keyed in apply order, older than its newest keep.
func keepNewest(b *bolt.Bucket, keep int, what string) error {
	c := b.Cursor()
	k, _ := c.Last()
	for i := 1; i < keep && k != nil; i++ {
		k, _ = c.Prev()
	}
	if k == nil {
		return nil
	}
	// A copy: the cursor's key lives in pages the deletes below may rewrite.
	oldest := bytes.Clone(k)
	for k, _ := c.First(); k != nil && bytes.Compare(k, oldest) < 0; k, _ = c.First() {
		if err := b.Delete(bytes.Clone(k)); err != nil {
			return fmt.Errorf("forget %s %s: %w", what, describeFailureKey(k), err)
		}
	}
	return nil
}

// migrateFailures converts the failure index of the build that keyed it by a per-member sequence
// (8B keys, meta/failure_seq): its entries keep their order under log index 0, which no command
// has, so they sort before every failure recorded since and are the first trimmed. It runs when a
// file is opened or a snapshot restored and does nothing to an index that has no such entry.
func migrateFailures(tx *bolt.Tx) error {
	b, meta := tx.Bucket(bucketFailures), tx.Bucket(bucketMeta)
	var old [][2][]byte
	next := uint32(0)
	err := b.ForEach(func(k, v []byte) error {
		switch {
		case len(k) != failureKeyLen:
			old = append(old, [2][]byte{bytes.Clone(k), bytes.Clone(v)})
		case binary.BigEndian.Uint64(k[:8]) == 0:
			next = binary.BigEndian.Uint32(k[8:]) + 1
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read failure index: %w", err)
	}
	if meta.Get(keyOldFailureSeq) == nil && len(old) == 0 {
		return nil
	}
	for _, e := range old {
		if err := b.Delete(e[0]); err != nil {
			return fmt.Errorf("convert failure %s: %w", describeFailureKey(e[0]), err)
		}
		if err := b.Put(logKey(0, next), e[1]); err != nil {
			return fmt.Errorf("convert failure %s: %w", describeFailureKey(e[0]), err)
		}
		next++
	}
	if err := meta.Delete(keyOldFailureSeq); err != nil {
		return fmt.Errorf("forget failure sequence: %w", err)
	}
	return trimFailures(b)
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
				return fmt.Errorf("decode failure %s: %w", describeFailureKey(k), err)
			}
			out = append(out, f)
		}
		return nil
	})
	return out, err
}
