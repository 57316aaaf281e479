// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"encoding/json"
	"fmt"

	"github.com/hashicorp/raft"
	"github.com/seed96588659/muster/pkg/api"
	bolt "go.etcd.io/bbolt"
)

// Protocol is the newest cluster protocol this build applies. Protocol 1 is the feature set of
// the builds before cluster protocols existed: commands 1..8 and every outcome but released and
// gone. Protocol 2 adds the released and gone outcomes, Retry (9) and SetProtocol (10), and
// refuses a late result of a lease that already reported a result for the node (lateGrant).
// Protocol 3 keeps a node a late result takes out of a live lease fenced by that lease until it
// expires (fence.go). Protocol 4 gives the nodes a lease fences its edge's lock window from the
// lease's end (fenceLockProtocol). Protocol 5 stores events as binary records (eventrecord.go).
// Protocol 6 applies Acquire (type 12): an edge's reports and its next grant in one entry.
// Protocol 7 holds issue 31's rules (docs/upgrades.md).
//
// Why a cluster protocol: a member of an older build refuses a report carrying an outcome it does
// not know (as bad input) and halts at a command type it does not know, while a newer member
// applies both; during a rolling upgrade their ledgers would diverge. The leader raises the
// cluster protocol through the log only once every member announces it can apply it, and every
// member gates these features on the protocol recorded in its ledger, so each entry is applied
// the same way everywhere, whatever order the operator upgrades members and edges in.
const Protocol = 7

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
	if c.Version <= cur {
		return &ProtocolResult{Version: cur}, nil
	}
	if err := t.meta.Put(keyProtocol, putUint(uint64(c.Version))); err != nil {
		return nil, storageError{err}
	}
	return &ProtocolResult{Version: c.Version, Raised: true}, nil
}

// protocolTooNew is why this build may not apply the entry: a SetProtocol above Protocol, or "".
func protocolTooNew(lg *raft.Log) string {
	if CommandType(lg.Data[0])&^IgnoreUnknown != CmdProtocol {
		return ""
	}
	var c SetProtocol
	if json.Unmarshal(lg.Data[1:], &c) != nil || c.Version <= Protocol {
		return "" // a malformed body is refused by applyOne
	}
	return fmt.Sprintf("cluster protocol %d needs a newer muster-coordinator; this one applies up to %d", c.Version, Protocol)
}

// outcomeProtocol is the cluster protocol that first records outcome o.
func outcomeProtocol(o api.Outcome) int {
	switch o {
	case api.OutcomeReleased, api.OutcomeGone:
		return 2
	}
	return 1
}

// retryProtocol is the cluster protocol that first applies Retry.
const retryProtocol = 2

// lateRuleProtocol is the cluster protocol that refuses a late result of a lease which reported
// a result for the node already (lateGrant); below it the older build's rule applies.
const lateRuleProtocol = 2

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
