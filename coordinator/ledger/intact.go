// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Why a walk before the real open: bbolt maps the file and trusts it. A truncated file faults
// (SIGBUS) where its pages should be, and a page of garbage trips an assertion, both as a crash
// with a stack dump, during the open itself: with NoFreelistSync the open walks every page to
// rebuild the free list, and reports what it finds by panicking on another goroutine, which no
// caller can recover. So the file is first opened read-only (no walk), its size checked against
// the pages its meta page claims, and every bucket read on this goroutine with faults turned
// into panics that are recovered here. It costs one read of the file at start (about a second
// for a million nodes).

// checkIntact reports why the ledger file at path cannot be trusted, or nil (also when it does
// not exist yet).
func checkIntact(path string) (err error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return fmt.Errorf("another process holds it open: %w", err)
	case err != nil:
		return err
	}
	defer db.Close()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading it failed: %v", r)
		}
	}()
	return db.View(func(tx *bolt.Tx) error {
		if tx.Size() > st.Size() {
			return fmt.Errorf("it is %d bytes but its pages reach %d: truncated", st.Size(), tx.Size())
		}
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			return b.ForEach(func(_, _ []byte) error { return nil })
		})
	})
}
