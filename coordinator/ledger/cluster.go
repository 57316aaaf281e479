// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	bolt "go.etcd.io/bbolt"
)

// keyClusterID in meta is the id of the cluster this ledger belongs to; absent in a ledger
// written before protocol 7, until the leader names the cluster.
//
// Why in the ledger: the id must be the same on every member and survive the loss of any
// minority, so it is replicated like any entry and comes with a snapshot; a data directory then
// says which cluster it belongs to (its ledger.db). The leader picks it once the cluster runs
// protocol 7 (a new cluster at once, an upgraded one when its last member is upgraded), and the
// first one applied stays: two leaders racing to name it end with the one the log ordered first.
var keyClusterID = []byte("cluster_id")

// maxClusterIDLen bounds a cluster id.
const maxClusterIDLen = 64

func validClusterID(id string) error {
	if len(id) > maxClusterIDLen {
		return errorf("cluster id longer than %d bytes", maxClusterIDLen)
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return errorf("cluster id %q: only a-z, 0-9 and '-'", id)
		}
	}
	return nil
}

// applyClusterID records id when the ledger names no cluster yet and runs protocol 7 or later;
// otherwise it changes nothing (an older protocol's members would not record it).
func applyClusterID(t *txn, id string) error {
	if id == "" || readProtocol(t.meta) < ClusterIDProtocol || t.meta.Get(keyClusterID) != nil {
		return nil
	}
	if err := t.meta.Put(keyClusterID, []byte(id)); err != nil {
		return storageError{err}
	}
	return nil
}

// ClusterID is the id of the cluster this ledger belongs to, empty while it names none.
func (l *Ledger) ClusterID() (string, error) {
	var id string
	err := l.view(func(tx *bolt.Tx) error {
		id = string(tx.Bucket(bucketMeta).Get(keyClusterID))
		return nil
	})
	return id, err
}
