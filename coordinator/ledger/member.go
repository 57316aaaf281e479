// SPDX-License-Identifier: Apache-2.0

package ledger

func applyMember(t *txn, c *Member) (any, error) {
	if err := validID("member id", c.ID); err != nil {
		return nil, err
	}
	if c.Remove {
		if err := t.members.Delete([]byte(c.ID)); err != nil {
			return nil, storageError{err}
		}
		return c, nil
	}
	if len(c.APIAddress) > 1024 {
		return nil, errorf("member %s: api address longer than 1024 bytes", c.ID)
	}
	if err := t.members.Put([]byte(c.ID), []byte(c.APIAddress)); err != nil {
		return nil, storageError{err}
	}
	return c, nil
}
