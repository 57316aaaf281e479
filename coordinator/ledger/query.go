// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	bolt "go.etcd.io/bbolt"
)

// Node returns one node's record, or ErrUnknownNode.
func (l *Ledger) Node(identity string) (*Node, error) {
	return getOne(l, bucketNodes, identity, getNode, ErrUnknownNode)
}

// getOne reads record id of bucket with get, failing with notFound when there is none.
func getOne[T any](l *Ledger, bucket []byte, id string, get func(*bolt.Bucket, string) (*T, error), notFound error) (*T, error) {
	var v *T
	err := l.view(func(tx *bolt.Tx) error {
		var err error
		v, err = get(tx.Bucket(bucket), id)
		return err
	})
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, fmt.Errorf("%w: %s", notFound, id)
	}
	return v, nil
}

// NodeFilter selects nodes for Nodes; zero fields match everything.
type NodeFilter struct {
	Region string
	State  api.NodeState
	// After resumes a listing after this identity.
	After string
	// Limit caps the page; 0 means 1000, and it is at most MaxBatch.
	Limit int
	// WithHistory keeps each node's history; listings drop it by default.
	WithHistory bool
	// scan overrides maxScan (tests).
	scan int
}

// maxScan bounds the records one filtered page examines, so a page's cost does not grow with the
// ledger: a filter that matches few of a million nodes answers a short (even empty) page with a
// next to resume from, instead of reading the whole ledger in one call.
const maxScan = 20_000

// Nodes lists nodes in identity order; next is the After of the following page, "" at the end.
// A page may hold fewer than Limit nodes and still have a next: a filtered page stops after
// examining maxScan records.
func (l *Ledger) Nodes(f NodeFilter) (nodes []Node, next string, err error) {
	if f.Limit <= 0 {
		f.Limit = 1000
	}
	f.Limit = min(f.Limit, MaxBatch)
	if f.State != "" && !f.State.Valid() {
		return nil, "", fmt.Errorf("unknown state %q", f.State)
	}
	if f.scan <= 0 {
		f.scan = maxScan
	}
	err = l.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketNodes).Cursor()
		k, v := c.First()
		if f.After != "" {
			k, v = c.Seek([]byte(f.After))
			if k != nil && string(k) == f.After {
				k, v = c.Next()
			}
		}
		// last is the key examined before k (it points into the mapped file, valid in this tx).
		var last []byte
		for scanned := 0; k != nil; k, v = c.Next() {
			if f.Region != "" || f.State != "" {
				if scanned == f.scan {
					next = string(last)
					return nil
				}
				scanned++
				last = k
				region, state, err := decodeNodeHead(v)
				if err != nil {
					return fmt.Errorf("decode node %q: %w", k, err)
				}
				if (f.Region != "" && region != f.Region) || (f.State != "" && state != f.State) {
					continue
				}
			}
			np, err := decodeNode(string(k), v)
			if err != nil {
				return fmt.Errorf("decode node %q: %w", k, err)
			}
			n := *np
			if len(nodes) == f.Limit {
				next = nodes[len(nodes)-1].Identity
				return nil
			}
			if !f.WithHistory {
				n.History = nil
			}
			nodes = append(nodes, n)
		}
		return nil
	})
	return nodes, next, err
}

// Counts returns the number of nodes per region and state.
func (l *Ledger) Counts() (map[string]map[api.NodeState]int, error) {
	out := map[string]map[api.NodeState]int{}
	err := l.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketCounts).ForEach(func(k, v []byte) error {
			i := bytes.IndexByte(k, 0)
			if i < 0 {
				return fmt.Errorf("malformed count key %q", k)
			}
			r := string(k[:i])
			if out[r] == nil {
				out[r] = map[api.NodeState]int{}
			}
			out[r][api.NodeState(k[i+1:])] = int(getUint(v))
			return nil
		})
	})
	return out, err
}

// RegionCounts returns the number of nodes per state in one region, reading only that region's
// count keys: an edge's acquire and heartbeat ask it for their answers, several times a second.
func (l *Ledger) RegionCounts(region string) (map[api.NodeState]int, error) {
	out := map[api.NodeState]int{}
	prefix := countKey(region, "")
	err := l.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketCounts).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			out[api.NodeState(k[len(prefix):])] = int(getUint(v))
		}
		return nil
	})
	return out, err
}

// Leases returns every outstanding lease in id order.
func (l *Ledger) Leases() ([]Lease, error) {
	var out []Lease
	err := l.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketLeases).ForEach(func(k, v []byte) error {
			var ls Lease
			if err := json.Unmarshal(v, &ls); err != nil {
				return fmt.Errorf("decode lease %q: %w", k, err)
			}
			out = append(out, ls)
			return nil
		})
	})
	return out, err
}

// LeaseCount is the number of outstanding leases, counted without decoding them (a status or a
// metrics scrape needs only the number; Leases decodes every lease's node list).
func (l *Ledger) LeaseCount() (int, error) {
	n := 0
	err := l.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketLeases).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			n++
		}
		return nil
	})
	return n, err
}

// Lease returns one outstanding lease, or ErrUnknownLease.
func (l *Ledger) Lease(id string) (*Lease, error) {
	return getOne(l, bucketLeases, id, getLease, ErrUnknownLease)
}

// LastStamp is the latest time a leader stamped into an applied command (zero before any): a
// new leader's time starts no earlier, so the ledger's time never runs backwards.
func (l *Ledger) LastStamp() (time.Time, error) {
	var at time.Time
	err := l.view(func(tx *bolt.Tx) error {
		if v := getUint(tx.Bucket(bucketMeta).Get(keyStamp)); v > 0 {
			at = time.Unix(0, int64(v)).UTC()
		}
		return nil
	})
	return at, err
}

// Pause returns the replicated operator pause flag as of the applied index.
func (l *Ledger) Pause() (PauseState, error) {
	var p PauseState
	err := l.view(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		var err error
		if p, err = readPause(meta); err != nil {
			return err
		}
		p.AsOf = getUint(meta.Get(keyAppliedIndex))
		p.Epoch, err = pauseEpoch(meta)
		return err
	})
	return p, err
}

// Eligible counts, up to limit, the waiting nodes of region that edge could be granted at now.
func (l *Ledger) Eligible(region, edge string, now time.Time, limit int) (int, error) {
	var n int
	err := l.view(func(tx *bolt.Tx) error {
		ids, err := eligible(tx.Bucket(bucketWaiting), region, edge, now, limit)
		n = len(ids)
		return err
	})
	return n, err
}

// Digest hashes every bucket's keys and values in order; two members that applied the same log
// have the same digest, whatever their files' page layout.
func (l *Ledger) Digest() ([]byte, error) {
	_, d, err := l.Fingerprint()
	return d, err
}

// Fingerprint is the applied index and the Digest read in one transaction: two members that
// answer the same index must answer the same digest, or their state machines diverged.
func (l *Ledger) Fingerprint() (index uint64, digest []byte, err error) {
	h := sha256.New()
	err = l.view(func(tx *bolt.Tx) error {
		index = getUint(tx.Bucket(bucketMeta).Get(keyAppliedIndex))
		for _, name := range allBuckets {
			if err := hashBucket(h, name, tx.Bucket(name)); err != nil {
				return err
			}
		}
		// Only a ledger that has held a node has the held index (heldindex.go): one that never
		// did hashes as the build before's.
		if b := tx.Bucket(bucketHeld); b != nil {
			return hashBucket(h, bucketHeld, b)
		}
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	return index, h.Sum(nil), nil
}

// hashBucket writes bucket b, named name, into h: its name, then every key and value in order.
func hashBucket(h io.Writer, name []byte, b *bolt.Bucket) error {
	h.Write(name)
	h.Write([]byte{0xff})
	return b.ForEach(func(k, v []byte) error {
		fmt.Fprintf(h, "%d:%s%d:%s", len(k), k, len(v), v)
		return nil
	})
}

// Members returns the recorded API address of each member by id.
func (l *Ledger) Members() (map[string]string, error) {
	out := map[string]string{}
	err := l.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMembers).ForEach(func(k, v []byte) error {
			out[string(k)] = string(v)
			return nil
		})
	})
	return out, err
}

// RegisterRefusals is the leader's check of a registration of ids in region before it proposes
// anything: each node it would refuse, by identity (an invalid or repeated identity, a node of
// another region, which only an operator's move changes), so the others are registered. A bad
// region or an oversized request is refused whole (err).
func (l *Ledger) RegisterRefusals(region string, ids []string) (map[string]error, error) {
	if err := validID("region", region); err != nil {
		return nil, err
	}
	if len(ids) > MaxBatch*100 {
		return nil, errorf("register of %d nodes is too large", len(ids))
	}
	refused := map[string]error{}
	seen := make(map[string]struct{}, len(ids))
	for _, id := range ids {
		if err := validID("node identity", id); err != nil {
			refused[id] = err
			continue
		}
		if _, dup := seen[id]; dup {
			refused[id] = errorf("node %s listed twice", id)
		}
		seen[id] = struct{}{}
	}
	err := l.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketNodes)
		for _, id := range ids {
			if refused[id] != nil {
				continue
			}
			v := b.Get([]byte(id))
			if v == nil {
				continue
			}
			nRegion, _, err := decodeNodeHead(v)
			if err != nil {
				return fmt.Errorf("decode node %q: %w", id, err)
			}
			if nRegion != region {
				refused[id] = otherRegion(id, nRegion, region)
			}
		}
		return nil
	})
	return refused, err
}

// otherRegion refuses a registration of node id, of region has, in region named.
func otherRegion(id, has, named string) error {
	return fmt.Errorf("%w: node %s is in region %s, not %s; only an operator's move changes a node's region", ErrWrongRegion, id, has, named)
}
