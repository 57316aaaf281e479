// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"
)

// snapshot is a read transaction opened on the FSM goroutine; Persist streams the bbolt file as of
// that moment while Apply goes on.
type snapshot struct {
	tx      *bolt.Tx
	release func()
}

var _ raft.FSMSnapshot = (*snapshot)(nil)

// Snapshot pins the ledger as it is now. The read lock it holds keeps Restore and Close from
// swapping the file until Release.
func (l *Ledger) Snapshot() (raft.FSMSnapshot, error) {
	l.mu.RLock()
	if l.db == nil {
		l.mu.RUnlock()
		return nil, ErrClosed
	}
	tx, err := l.db.Begin(false)
	if err != nil {
		l.mu.RUnlock()
		return nil, fmt.Errorf("snapshot ledger %s: %w", l.path, err)
	}
	var once sync.Once
	return &snapshot{tx: tx, release: func() {
		once.Do(func() {
			_ = tx.Rollback()
			l.mu.RUnlock()
		})
	}}, nil
}

// Persist writes the whole bbolt file to the sink. It releases the read transaction when done,
// because raft.RecoverCluster never calls Release.
func (s *snapshot) Persist(sink raft.SnapshotSink) error {
	defer s.release()
	w := bufio.NewWriterSize(sink, 1<<20)
	if _, err := s.tx.WriteTo(w); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("persist ledger snapshot: %w", err)
	}
	if err := w.Flush(); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("persist ledger snapshot: %w", err)
	}
	if err := sink.Close(); err != nil {
		return fmt.Errorf("persist ledger snapshot: %w", err)
	}
	return nil
}

// Release ends the read transaction.
func (s *snapshot) Release() { s.release() }

// WriteTo streams a consistent copy of the ledger file to w (an operator backup).
func (l *Ledger) WriteTo(w io.Writer) (int64, error) {
	var n int64
	err := l.view(func(tx *bolt.Tx) error {
		var err error
		n, err = tx.WriteTo(w)
		return err
	})
	if err != nil {
		return n, fmt.Errorf("copy ledger %s: %w", l.path, err)
	}
	return n, nil
}

// Restore discards all state and replaces it with the snapshot: the stream is written to a
// temporary file, checked, then renamed over the ledger file, so a failure leaves the old ledger.
// A snapshot of a cluster protocol above this build's is refused (tooNew), whether raft installs
// it from the leader or restores it at start: the log entry that raised the protocol, at which
// this member would halt, may be compacted into the snapshot.
func (l *Ledger) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	tmp := l.path + ".restore"
	if err := removeFile(tmp); err != nil {
		return fmt.Errorf("restore ledger: %w", err)
	}
	if err := writeFileSync(tmp, rc); err != nil {
		_ = removeFile(tmp)
		return fmt.Errorf("restore ledger: %w", err)
	}
	protocol, err := checkFile(tmp)
	if err != nil {
		_ = removeFile(tmp)
		return fmt.Errorf("restore ledger: snapshot is not a ledger: %w", err)
	}
	// The recover mark is this member's own note, not ledger content: it outlives a restore. A
	// snapshot that carries another member's mark, or an applied hold that cleared one, only makes
	// a later leader hold again from its own start (longer, never shorter).
	mark, marked, err := l.Recovered()
	if err != nil && !errors.Is(err, ErrClosed) {
		_ = removeFile(tmp)
		return fmt.Errorf("restore ledger: %w", err)
	}
	if why := tooNew(protocol); why != "" {
		_ = removeFile(tmp)
		l.log.Error("snapshot refused: " + why + "; upgrade this member")
		return fmt.Errorf("restore ledger: snapshot refused: %s", why)
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	if l.db != nil {
		if err := l.db.Close(); err != nil {
			return fmt.Errorf("restore ledger: close current: %w", err)
		}
		l.db = nil
	}
	if err := os.Rename(tmp, l.path); err != nil {
		return fmt.Errorf("restore ledger: %w", err)
	}
	if err := syncDir(filepath.Dir(l.path)); err != nil {
		return fmt.Errorf("restore ledger: %w", err)
	}
	db, err := l.openDB(l.path, false)
	if err != nil {
		return fmt.Errorf("restore ledger: %w", err)
	}
	l.db = db
	if err := l.loadApplied(); err != nil {
		return fmt.Errorf("restore ledger: %w", err)
	}
	if marked {
		if err := putRecoverMark(l.db, mark); err != nil {
			return fmt.Errorf("restore ledger: keep the recover mark: %w", err)
		}
	}
	if l.opts.OnApply != nil {
		l.opts.OnApply(Applied{Index: l.applied.Load(), Restored: true, PauseChanged: true})
	}
	return nil
}

func writeFileSync(path string, r io.Reader) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return f.Close()
}

// checkFile tells whether the file at path is a ledger, and returns its cluster protocol.
func checkFile(path string) (int, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 0})
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var protocol int
	err = db.View(func(tx *bolt.Tx) error {
		for _, b := range allBuckets {
			if tx.Bucket(b) == nil && !slices.ContainsFunc(laterBuckets, func(l []byte) bool { return bytes.Equal(l, b) }) {
				return fmt.Errorf("bucket %s missing", b)
			}
		}
		protocol = readProtocol(tx.Bucket(bucketMeta))
		return nil
	})
	return protocol, err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}
