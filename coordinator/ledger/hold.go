// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	bolt "go.etcd.io/bbolt"
)

// maxHoldReason bounds the reason a hold carries.
const maxHoldReason = 1024

// CmdHold is the type byte of Hold; on-disk format, like the others in command.go.
const CmdHold CommandType = 13

// Why a hold: `recover` makes the survivors of a lost majority the whole cluster, and every entry
// only the lost members held is gone, grants included. An edge may still hold such a lease (and
// go-choria's lock on its nodes) while the survivors see the node waiting. No node is safe to
// offer until every such lease has ended on its edge's count and the lock window has passed, so
// the first leader after a recover stops every new grant until then. The hold is in the log, so
// a later leader among the survivors keeps it, and every member agrees on its end (ledger time).

// Hold stops new grants until Until (ledger time). A member of a build before HoldProtocol halts
// at its type, so the leader proposes it only from that protocol on (below it the lessor holds
// grants in memory, lessor/hold.go). A hold in force is never shortened. Applying
// it also clears this member's recover mark (MarkRecovered): the hold is that mark, replicated.
type Hold struct {
	Now    time.Time `json:"now"`
	Until  time.Time `json:"until"`
	Reason string    `json:"reason"`
}

// Type is the command's type byte.
func (Hold) Type() CommandType { return CmdHold }

func (c Hold) stamp() time.Time { return c.Now }

// HoldState is the hold on new grants the ledger records; zero when there never was one.
type HoldState struct {
	Until  time.Time `json:"until"`
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
}

// HeldAt reports whether the hold stops a new grant stamped now.
func (h HoldState) HeldAt(now time.Time) bool { return now.Before(h.Until) }

// keyHold in meta is the replicated HoldState (JSON).
var keyHold = []byte("hold")

func applyHold(t *txn, c *Hold) (any, error) {
	if cur := readProtocol(t.meta); cur < HoldProtocol {
		return nil, fmt.Errorf("%w: a hold on grants needs cluster protocol %d; the cluster runs %d until every member is upgraded", ErrClusterProtocol, HoldProtocol, cur)
	}
	if err := validNow(c.Now); err != nil {
		return nil, err
	}
	switch {
	case c.Until.IsZero():
		return nil, errorf("hold carries no end")
	case len(c.Reason) > maxHoldReason:
		return nil, errorf("hold reason of %d bytes exceeds %d", len(c.Reason), maxHoldReason)
	}
	h, err := readHold(t.meta)
	if err != nil {
		return nil, storageError{err}
	}
	if !h.Until.After(c.Until) {
		h = HoldState{Until: c.Until, At: c.Now, Reason: c.Reason}
	}
	v, err := json.Marshal(h)
	if err != nil {
		return nil, storageError{err}
	}
	if err := t.meta.Put(keyHold, v); err != nil {
		return nil, storageError{err}
	}
	if local := t.tx.Bucket(bucketLocal); local != nil {
		if err := local.Delete(keyRecovered); err != nil {
			return nil, storageError{err}
		}
	}
	// Long polls look again: a hold that ended earlier than they were told would be seen anyway
	// at their next recheck, this one at once.
	t.pauseChanged = true
	if err := t.noteEvent(api.Event{Kind: api.EventGrantsHeld, At: c.Now, To: "",
		Reason: fmt.Sprintf("no node is offered until %s (ledger time): %s", h.Until.UTC().Format(time.RFC3339), h.Reason)}); err != nil {
		return nil, storageError{err}
	}
	return &h, nil
}

// heldGrant is the refusal of a new grant stamped now while the hold lasts, or nil. Only a
// Hold writes the key, and only from HoldProtocol, so older members never meet the rule.
func heldGrant(meta *bolt.Bucket, now time.Time) error {
	if readProtocol(meta) < HoldProtocol {
		return nil
	}
	h, err := readHold(meta)
	if err != nil {
		return storageError{err}
	}
	if h.HeldAt(now) {
		return fmt.Errorf("%w until %s: %s", ErrHeld, h.Until.UTC().Format(time.RFC3339), h.Reason)
	}
	return nil
}

func readHold(meta *bolt.Bucket) (HoldState, error) {
	var h HoldState
	v := meta.Get(keyHold)
	if v == nil {
		return h, nil
	}
	if err := json.Unmarshal(v, &h); err != nil {
		return h, fmt.Errorf("decode hold: %w", err)
	}
	return h, nil
}

// Hold returns the replicated hold on new grants (zero Until when there is none).
func (l *Ledger) Hold() (HoldState, error) {
	var h HoldState
	err := l.view(func(tx *bolt.Tx) error {
		var err error
		h, err = readHold(tx.Bucket(bucketMeta))
		return err
	})
	return h, err
}
