// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"
)

// keyProtocol in meta is the cluster protocol (8B BE); absent means 1, so a ledger written before
// protocols existed reads as 1. An older build ignores the key, in its file and in snapshots.
var keyProtocol = []byte("protocol")

// ProtocolResult is the cluster protocol after a SetProtocol; Raised says it changed.
type ProtocolResult struct {
	Version int
	Raised  bool
}

func readProtocol(meta *bolt.Bucket) int {
	if v := getUint(meta.Get(keyProtocol)); v > 1 {
		return int(v)
	}
	return 1
}

// ClusterProtocol is the cluster protocol this member's ledger has applied.
func (l *Ledger) ClusterProtocol() (int, error) {
	var v int
	err := l.view(func(tx *bolt.Tx) error {
		v = readProtocol(tx.Bucket(bucketMeta))
		return nil
	})
	return v, err
}

func applySetProtocol(t *txn, c *SetProtocol) (any, error) {
	if c.Version < 1 {
		return nil, errorf("cluster protocol %d: versions start at 1", c.Version)
	}
	// Not reached above Protocol: ApplyLogs halts before the batch (haltOnUnknown).
	cur := readProtocol(t.meta)
	if err := validClusterID(c.ClusterID); err != nil {
		return nil, err
	}
	res := &ProtocolResult{Version: cur}
	if c.Version > cur {
		if err := t.meta.Put(keyProtocol, putUint(uint64(c.Version))); err != nil {
			return nil, storageError{err}
		}
		res = &ProtocolResult{Version: c.Version, Raised: true}
	}
	if err := applyClusterID(t, c.ClusterID); err != nil {
		return nil, err
	}
	return res, nil
}

// protocolTooNew is why this build may not apply the entry: a SetProtocol above Protocol, or "".
func protocolTooNew(lg *raft.Log) string {
	if CommandType(lg.Data[0])&^IgnoreUnknown != CmdProtocol {
		return ""
	}
	var c SetProtocol
	if json.Unmarshal(lg.Data[1:], &c) != nil {
		return "" // refused by applyOne
	}
	return tooNew(c.Version)
}

// checkStored refuses a ledger file's meta (nil for a new file) this build may not run on: one
// of a protocol above Protocol, which a newer build wrote, and at start one its cluster had raised
// to a protocol below OldestProtocol, which the builds in between must apply first. A file
// without a stored protocol (new, or written before protocols) is not refused: a log replayed
// from its start runs at protocol 1 until its first SetProtocol.
func checkStored(meta *bolt.Bucket, atStart bool) error {
	if meta == nil {
		return nil
	}
	v := readProtocol(meta)
	if why := tooNew(v); why != "" {
		return errors.New(why + "; a newer build wrote this ledger: start the member with that build (a member is not downgraded, docs/upgrades.md)")
	}
	if atStart && meta.Get(keyProtocol) != nil && v < OldestProtocol {
		return fmt.Errorf("cluster protocol %d is older than this muster-coordinator runs in (from %d): upgrade every member to a build of protocol %d first, then to this one (docs/upgrades.md)", v, OldestProtocol, OldestProtocol)
	}
	return nil
}

// tooNew is why this build may not apply a ledger at cluster protocol v (an entry raising it, a
// snapshot or a file holding it), or "": a member that did would apply what follows by older
// rules than the others and silently diverge.
func tooNew(v int) string {
	if v <= Protocol {
		return ""
	}
	return fmt.Sprintf("cluster protocol %d needs a newer muster-coordinator; this one applies up to %d", v, Protocol)
}

// checkOutcomes refuses results the cluster protocol cur cannot record yet. The whole report is
// refused, as a member of the build before them refused a report with an outcome it did not know.
func checkOutcomes(cur int, results []Result) error {
	for _, r := range results {
		if err := checkOutcome(cur, r); err != nil {
			return err
		}
	}
	return nil
}

// checkOutcome refuses one result the cluster protocol cur cannot record yet.
func checkOutcome(cur int, r Result) error {
	if need := outcomeProtocol(r.Outcome); need > cur {
		return fmt.Errorf("%w: node %s: outcome %s needs cluster protocol %d; the cluster runs %d until every member is upgraded",
			ErrClusterProtocol, r.Identity, r.Outcome, need, cur)
	}
	return nil
}

func checkRetry(cur int) error {
	if cur < retryProtocol {
		return fmt.Errorf("%w: retry needs cluster protocol %d; the cluster runs %d until every member is upgraded", ErrClusterProtocol, retryProtocol, cur)
	}
	return nil
}

// Recordable splits results into those the cluster protocol lets every member record now and
// the refusals of the others, so a leader proposes only what all members apply alike and an
// edge's other results in the same report are not lost with them. The ledger still refuses a
// report holding a gated outcome whole (checkOutcomes), as an older leader might propose one.
func (l *Ledger) Recordable(results []Result) ([]Result, []Rejection, error) {
	cur, err := l.ClusterProtocol()
	if err != nil {
		return nil, nil, err
	}
	if cur >= Protocol {
		// Every outcome this build knows is recorded: no copy on the report path.
		return results, nil, nil
	}
	ok := results[:0:0]
	var held []Rejection
	for _, r := range results {
		if err := checkOutcome(cur, r); err != nil {
			held = append(held, reject(r.Identity, err))
			continue
		}
		ok = append(ok, r)
	}
	return ok, held, nil
}

// CheckRetry tells the leader, before it proposes, whether the cluster can apply a retry now.
func (l *Ledger) CheckRetry() error {
	cur, err := l.ClusterProtocol()
	if err != nil {
		return err
	}
	return checkRetry(cur)
}
