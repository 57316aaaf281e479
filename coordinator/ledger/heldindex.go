// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	bolt "go.etcd.io/bbolt"
)

// bucketHeld indexes the held nodes by region 0x00 HeldAt (8B BE Unix ns) and identity, so the
// age of each region's oldest hold is read without a scan of the nodes (the held-too-long
// alert's gauge). Every member maintains it in the same transactions, so it is part of the
// digest. It is created by the first hold, which only cluster protocol 8 applies: a ledger that
// never held a node has no such bucket, and the file and digest of the build before.
var bucketHeld = []byte("held")

// heldKey is n's key in bucketHeld.
func heldKey(n *Node) []byte {
	k := make([]byte, 0, len(n.Region)+1+8+len(n.Identity))
	k = append(k, n.Region...)
	k = append(k, 0)
	k = binary.BigEndian.AppendUint64(k, uint64(max(n.HeldAt.UnixNano(), 0)))
	return append(k, n.Identity...)
}

// indexHeld keeps bucketHeld in step with a node's change from old (nil: new) to n (nil:
// deleted).
func (t *txn) indexHeld(old, n *Node) error {
	wasHeld := old != nil && old.State == api.StateHeld
	isHeld := n != nil && n.State == api.StateHeld
	if wasHeld && isHeld && bytes.Equal(heldKey(old), heldKey(n)) {
		return nil
	}
	if wasHeld {
		if b := t.tx.Bucket(bucketHeld); b != nil {
			if err := b.Delete(heldKey(old)); err != nil {
				return fmt.Errorf("unindex held node %q: %w", old.Identity, err)
			}
		}
	}
	if isHeld {
		b, err := t.tx.CreateBucketIfNotExists(bucketHeld)
		if err != nil {
			return fmt.Errorf("index held node %q: %w", n.Identity, err)
		}
		if err := b.Put(heldKey(n), nil); err != nil {
			return fmt.Errorf("index held node %q: %w", n.Identity, err)
		}
	}
	return nil
}

// OldestHolds is when each region's longest-held node was held, for regions that hold any.
func (l *Ledger) OldestHolds() (map[string]time.Time, error) {
	out := map[string]time.Time{}
	err := l.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketHeld)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		// The first key of each region is its oldest hold; then skip to the next region.
		for k, _ := c.First(); k != nil; {
			i := bytes.IndexByte(k, 0)
			if i < 0 || len(k) < i+1+8 {
				return fmt.Errorf("held index: bad key %q", k)
			}
			region := string(k[:i])
			out[region] = time.Unix(0, int64(binary.BigEndian.Uint64(k[i+1:i+9]))).UTC()
			k, _ = c.Seek(append([]byte(region), 1))
		}
		return nil
	})
	return out, err
}
