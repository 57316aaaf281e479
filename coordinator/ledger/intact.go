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

// openTimeout is how long an open waits for bbolt's file lock. Only another process holds it
// (a member's directory is locked by its process first, so this is a second defence), and a
// wait is not what the operator wants: "in use" at once.
const openTimeout = time.Second

// checkIntact reports why the ledger file at path cannot be trusted, or nil (also when it does
// not exist yet). A file another process holds open is ErrInUse, not damage.
func checkIntact(path string) (err error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: openTimeout})
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return ErrInUse
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
