// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"bytes"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// Why fences: a late provisioned/shutdown of an expired lease l1 may find its node in a newer
// live lease l2. The ledger records the fact and takes the node out of l2, but l2's edge may be
// acting on it until its own count of l2 ends, and that count is only bounded by l2's expiry on
// the leader (lessor/DESIGN.md). Had the node become eligible again (a sighting after
// reprovision_after), a third lease could be granted it while l2's edge still acts: two edges on
// one node. So the node stays fenced by l2 until l2 is expired, which a promotion carries over a
// failover as it does every lease; l2 is kept until then even when it holds no node any more, and
// its renewals list only the nodes it still holds, so its edge learns the node is gone.

// fenceKey indexes the fences bucket: node identity 0x00 lease id (identities hold no 0x00).
func fenceKey(node, leaseID string) []byte {
	return append(append([]byte(node), 0), leaseID...)
}

// fence records that lease ls no longer holds node id but still fences it.
func (t *txn) fence(ls *Lease, id string) error {
	if !slices.Contains(ls.Fenced, id) {
		ls.Fenced = append(ls.Fenced, id)
	}
	if err := t.fences.Put(fenceKey(id, ls.ID), nil); err != nil {
		return fmt.Errorf("fence node %s by lease %s: %w", id, ls.ID, err)
	}
	return nil
}

// unfence forgets the fences of lease ls, which is ending.
func (t *txn) unfence(ls *Lease) error {
	for _, id := range ls.Fenced {
		if err := t.fences.Delete(fenceKey(id, ls.ID)); err != nil {
			return fmt.Errorf("unfence node %s of lease %s: %w", id, ls.ID, err)
		}
	}
	return nil
}

// fencedBy returns a lease that still fences node id, or "".
func fencedBy(b *bolt.Bucket, id string) string {
	prefix := append([]byte(id), 0)
	k, _ := b.Cursor().Seek(prefix)
	if k == nil || !bytes.HasPrefix(k, prefix) {
		return ""
	}
	return string(k[len(prefix):])
}

// dropFromLease takes node id out of lease leaseID's node list. From fenceProtocol on, the lease
// keeps fencing the node and is kept until it expires; below it, the lease is removed once it
// holds none, so its later report or expiry of the node is refused or skipped either way.
func dropFromLease(t *txn, leaseID, id string) error {
	ls, err := getLease(t.leases, leaseID)
	if err != nil || ls == nil {
		return err
	}
	ls.Nodes = slices.DeleteFunc(ls.Nodes, func(n string) bool { return n == id })
	if readProtocol(t.meta) >= fenceProtocol {
		if err := t.fence(ls, id); err != nil {
			return err
		}
		return t.putLease(ls)
	}
	if len(ls.Nodes) > 0 {
		return t.putLease(ls)
	}
	if err := t.leases.Delete([]byte(ls.ID)); err != nil {
		return fmt.Errorf("delete lease %s: %w", ls.ID, err)
	}
	return nil
}
