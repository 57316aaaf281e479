// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"encoding/json"
	"fmt"
)

func applyExtend(t *txn, c *Extend) (any, error) {
	if err := validNow(c.Now); err != nil {
		return nil, err
	}
	if c.By < 0 || c.AtLeast < 0 {
		return nil, errorf("extend by %s, at least %s: must not be negative", c.By, c.AtLeast)
	}
	var all []*Lease
	err := t.leases.ForEach(func(k, v []byte) error {
		ls := &Lease{}
		if err := json.Unmarshal(v, ls); err != nil {
			return fmt.Errorf("decode lease %q: %w", k, err)
		}
		all = append(all, ls)
		return nil
	})
	if err != nil {
		return nil, storageError{err}
	}
	for _, ls := range all {
		ls.ExpiresAt = maxTime(maxTime(ls.ExpiresAt, c.Now).Add(c.By), c.Now.Add(c.AtLeast))
		if err := t.putLease(ls); err != nil {
			return nil, storageError{err}
		}
	}
	return &ExtendResult{Extended: len(all)}, nil
}
