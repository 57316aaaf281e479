// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	bolt "go.etcd.io/bbolt"
)

// txn is one bbolt write transaction with the bookkeeping every command shares: the waiting index
// and the per-region state counts follow each node write, so no command can forget them.
type txn struct {
	tx          *bolt.Tx
	nodes       *bolt.Bucket
	leases      *bolt.Bucket
	waiting     *bolt.Bucket
	counts      *bolt.Bucket
	meta        *bolt.Bucket
	members     *bolt.Bucket
	reports     *bolt.Bucket
	reportTimes *bolt.Bucket
	failures    *bolt.Bucket
	fences      *bolt.Bucket
	auditLog    *bolt.Bucket
	eventLog    *bolt.Bucket

	// index is the raft index of the command being applied and failurePos the number of
	// failures it has recorded: together the next failure's key.
	index         uint64
	failurePos    uint32
	failuresNoted bool
	// auditPos and eventPos number the operator actions and the events of the command being
	// applied; audits and events count those the transaction recorded.
	auditPos, eventPos uint32
	audits, events     int
	// eventMemory is how many events the event log keeps (Options.EventMemory).
	eventMemory int

	deltas       map[string]int64
	regions      map[string]struct{}
	pauseChanged bool
	// stamp is the latest leader time of the commands applied in this transaction.
	stamp time.Time
}

func newTxn(tx *bolt.Tx) *txn {
	t := &txn{
		tx:          tx,
		nodes:       tx.Bucket(bucketNodes),
		leases:      tx.Bucket(bucketLeases),
		waiting:     tx.Bucket(bucketWaiting),
		counts:      tx.Bucket(bucketCounts),
		meta:        tx.Bucket(bucketMeta),
		members:     tx.Bucket(bucketMembers),
		reports:     tx.Bucket(bucketReports),
		reportTimes: tx.Bucket(bucketReportTimes),
		failures:    tx.Bucket(bucketFailures),
		fences:      tx.Bucket(bucketFences),
		auditLog:    tx.Bucket(bucketAudit),
		eventLog:    tx.Bucket(bucketEvents),
		deltas:      map[string]int64{},
		regions:     map[string]struct{}{},
	}
	// A region's waiting nodes are mostly appended at its end (eligible from now) and granted from
	// its front: bbolt's default half-full split left every page of the index half empty, a
	// quarter of the file at a million nodes. The logs keyed by raft index or time only ever grow
	// at their end and are trimmed at their front: half-full pages there doubled the pages every
	// commit writes (the event log, one entry per node transition, was the largest part of a
	// member's bbolt writes). Only page layout changes, not content.
	for _, b := range []*bolt.Bucket{t.waiting, t.eventLog, t.failures, t.auditLog, t.reportTimes} {
		b.FillPercent = 1.0
	}
	return t
}

// putNode stores n; old is its previous record, nil when new.
func (t *txn) putNode(old, n *Node) error {
	if old != nil {
		if old.State == api.StateWaiting {
			if err := t.waiting.Delete(waitKey(old)); err != nil {
				return fmt.Errorf("unindex node %q: %w", old.Identity, err)
			}
		}
		t.deltas[string(countKey(old.Region, old.State))]--
	}
	if n.State == api.StateWaiting {
		if err := t.waiting.Put(waitKey(n), waitValue(n)); err != nil {
			return fmt.Errorf("index node %q: %w", n.Identity, err)
		}
		t.regions[n.Region] = struct{}{}
	}
	t.deltas[string(countKey(n.Region, n.State))]++
	if err := t.indexHeld(old, n); err != nil {
		return err
	}
	if err := t.nodes.Put([]byte(n.Identity), encodeNode(n)); err != nil {
		return fmt.Errorf("store node %q: %w", n.Identity, err)
	}
	return t.noteTransition(old, n)
}

// saw raises the transaction's latest leader time to at.
func (t *txn) saw(at time.Time) {
	if at.After(t.stamp) {
		t.stamp = at
	}
}

func (t *txn) putLease(ls *Lease) error {
	v, err := json.Marshal(ls)
	if err != nil {
		return fmt.Errorf("encode lease %q: %w", ls.ID, err)
	}
	if err := t.leases.Put([]byte(ls.ID), v); err != nil {
		return fmt.Errorf("store lease %q: %w", ls.ID, err)
	}
	return nil
}

// command starts applying the command at raft index index.
func (t *txn) command(index uint64) { t.index, t.failurePos, t.auditPos, t.eventPos = index, 0, 0, 0 }

// finish trims the failure index, writes the count deltas in key order and the applied index
// and term.
func (t *txn) finish(index, term uint64) error {
	if t.failuresNoted {
		if err := trimFailures(t.failures); err != nil {
			return err
		}
	}
	if err := t.keepCounted(t.auditLog, keyAuditCount, t.audits, AuditMemory, "audit entry"); err != nil {
		return err
	}
	if err := t.keepCounted(t.eventLog, keyEventCount, t.events, cmp.Or(t.eventMemory, EventMemory), "event"); err != nil {
		return err
	}
	keys := make([]string, 0, len(t.deltas))
	for k, d := range t.deltas {
		if d != 0 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		n := int64(getUint(t.counts.Get([]byte(k)))) + t.deltas[k]
		var err error
		if n <= 0 {
			err = t.counts.Delete([]byte(k))
		} else {
			err = t.counts.Put([]byte(k), putUint(uint64(n)))
		}
		if err != nil {
			return fmt.Errorf("store count: %w", err)
		}
	}
	if !t.stamp.IsZero() {
		if old := getUint(t.meta.Get(keyStamp)); uint64(max(t.stamp.UnixNano(), 0)) > old {
			if err := t.meta.Put(keyStamp, putUint(uint64(t.stamp.UnixNano()))); err != nil {
				return fmt.Errorf("store ledger time: %w", err)
			}
		}
	}
	if err := t.meta.Put(keyAppliedIndex, putUint(index)); err != nil {
		return fmt.Errorf("store applied index: %w", err)
	}
	if err := t.meta.Put(keyAppliedTerm, putUint(term)); err != nil {
		return fmt.Errorf("store applied term: %w", err)
	}
	return nil
}

func (t *txn) changedRegions() []string {
	out := make([]string, 0, len(t.regions))
	for r := range t.regions {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// keepCounted deletes the oldest entries of b beyond keep, b having grown by added in this
// transaction; meta keeps b's count under key, so trimming costs the entries deleted, not a walk
// over the keep newest at every transaction (100,000 events).
func (t *txn) keepCounted(b *bolt.Bucket, key []byte, added, keep int, what string) error {
	if added == 0 {
		return nil
	}
	n := int(getUint(t.meta.Get(key))) + added
	c := b.Cursor()
	for k, _ := c.First(); k != nil && n > keep; k, _ = c.First() {
		if err := b.Delete(bytes.Clone(k)); err != nil {
			return fmt.Errorf("forget %s %s: %w", what, describeFailureKey(k), err)
		}
		n--
	}
	if err := t.meta.Put(key, putUint(uint64(n))); err != nil {
		return fmt.Errorf("store the count of %ss: %w", what, err)
	}
	return nil
}
