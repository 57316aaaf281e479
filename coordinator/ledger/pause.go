// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

func applyPause(t *txn, c *Pause) (any, error) {
	if err := validNow(c.Now); err != nil {
		return nil, err
	}
	p := PauseState{Paused: c.Paused, At: c.Now, By: c.By, Reason: c.Reason}
	v, err := json.Marshal(p)
	if err != nil {
		return nil, storageError{err}
	}
	if err := t.meta.Put(keyPause, v); err != nil {
		return nil, storageError{err}
	}
	t.pauseChanged = true
	p.AsOf = t.index
	if p.Epoch, err = pauseEpoch(t.meta); err != nil {
		return nil, storageError{err}
	}
	return &p, nil
}

// pauseEpoch is the recover epoch the pause flag holds in (PauseState.Epoch). Only the first
// leader after a recover writes a hold, before it answers an edge, and ledger time never goes
// back along a log, so the epoch of the history a recover starts is above that of the history
// it cut off, whose last hold, if any, is in the prefix the two share. Two holds in force at
// once keep the later end and the first stamp (ledger/hold.go), so a second recover inside a
// longer hold keeps the epoch. Below HoldProtocol a recover writes no hold, and a member that
// joined after it cannot know of it, so no epoch is given (0): answers are ordered by index
// alone, and a pause committed below an index the lost majority reached is not taken until the
// new log passes it (docs/cluster.md).
func pauseEpoch(meta *bolt.Bucket) (uint64, error) {
	if readProtocol(meta) < HoldProtocol {
		return 0, nil
	}
	h, err := readHold(meta)
	if err != nil || h.At.IsZero() {
		return 1, err
	}
	return max(2, uint64(h.At.UnixNano())), nil
}

func readPause(meta *bolt.Bucket) (PauseState, error) {
	var p PauseState
	v := meta.Get(keyPause)
	if v == nil {
		return p, nil
	}
	if err := json.Unmarshal(v, &p); err != nil {
		return p, fmt.Errorf("decode pause flag: %w", err)
	}
	return p, nil
}
