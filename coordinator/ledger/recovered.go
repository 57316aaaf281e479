// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bucketLocal holds this member's own notes about its file, which are not ledger content: Digest
// leaves it out and no command but Hold touches it. A snapshot carries it like every bucket.
var bucketLocal = []byte("local")

// keyRecovered in bucketLocal is the RecoverMark `recover` leaves.
var keyRecovered = []byte("recovered")

// RecoverMark records that `recover` rewrote this member's Raft configuration: the first leader
// that finds it holds new grants (Hold), which clears it on every member.
type RecoverMark struct {
	// At is the recover's wall-clock time, for the operator; no rule reads it.
	At    time.Time `json:"at"`
	Peers []string  `json:"peers"`
	// LeaseTTL is the longest lease.ttl a member of the cluster ran before the loss, as the
	// operator gave it to recover; 0: the survivors' own. A lost leader of a longer TTL told its
	// edges to count that long, which no survivor's log may show.
	LeaseTTL time.Duration `json:"lease_ttl,omitempty"`
}

// MarkRecovered notes, offline, that `recover` made peers the whole cluster: this ledger may lack
// grants only the lost members held, so its first leader must hold new grants (Hold), for at
// least leaseTTL (the longest any member ran; 0: its own) and the rest of the hold.
func (l *Ledger) MarkRecovered(at time.Time, peers []string, leaseTTL time.Duration) error {
	if leaseTTL < 0 {
		return fmt.Errorf("recover mark: lease TTL %s is negative", leaseTTL)
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.db == nil {
		return ErrClosed
	}
	if err := putRecoverMark(l.db, RecoverMark{At: at.UTC(), Peers: peers, LeaseTTL: leaseTTL}); err != nil {
		return fmt.Errorf("mark ledger %s recovered: %w", l.path, err)
	}
	return nil
}

// putRecoverMark writes mark into db's local bucket.
func putRecoverMark(db *bolt.DB, mark RecoverMark) error {
	v, err := json.Marshal(mark)
	if err != nil {
		return err
	}
	return db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketLocal)
		if err != nil {
			return err
		}
		return b.Put(keyRecovered, v)
	})
}

// Recovered returns the recover mark, if `recover` left one no Hold has cleared yet.
func (l *Ledger) Recovered() (RecoverMark, bool, error) {
	var mark RecoverMark
	var ok bool
	err := l.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketLocal)
		if b == nil {
			return nil
		}
		v := b.Get(keyRecovered)
		if v == nil {
			return nil
		}
		ok = true
		return json.Unmarshal(v, &mark)
	})
	if err != nil {
		return RecoverMark{}, false, fmt.Errorf("read recover mark: %w", err)
	}
	return mark, ok, nil
}
