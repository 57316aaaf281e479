// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"bytes"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// FirstSeenWaiting counts region's first-seen nodes, those waiting that were never leased (new
// identities a discovery named, real or invented), up to limit: the leader caps them per region
// before it registers more (coordinator.Config.MaxFirstSeen). A read, not a command: the cap is
// the leader's rule, and the log applies whatever it proposed.
func (l *Ledger) FirstSeenWaiting(region string, limit int) (int, error) {
	n := 0
	prefix := append([]byte(region), 0)
	err := l.view(func(tx *bolt.Tx) error {
		nodes := tx.Bucket(bucketNodes)
		cur := tx.Bucket(bucketWaiting).Cursor()
		for k, _ := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && n < limit; k, _ = cur.Next() {
			rest := k[len(prefix):]
			if len(rest) < 8 {
				return fmt.Errorf("malformed waiting index key %q", k)
			}
			id := string(rest[8:])
			node, err := decodeNode(id, nodes.Get(rest[8:]))
			if err != nil {
				return fmt.Errorf("decode waiting node %q: %w", id, err)
			}
			if node.LeasedAt.IsZero() {
				n++
			}
		}
		return nil
	})
	return n, err
}

// Unknown lists the identities among ids the ledger holds no record of, in the order given.
func (l *Ledger) Unknown(ids []string) ([]string, error) {
	var out []string
	err := l.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketNodes)
		for _, id := range ids {
			if b.Get([]byte(id)) == nil {
				out = append(out, id)
			}
		}
		return nil
	})
	return out, err
}
