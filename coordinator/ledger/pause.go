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
	return &p, nil
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
