// SPDX-License-Identifier: Apache-2.0

package keys

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// racyWindow is how recent a file's mtime must be for its stat stamp not to be trusted. File
// systems stamp mtime coarsely (a kernel tick, or a whole second), so a seed rewritten in place
// within that tick keeps its size, inode and mtime: such a file is read again at the next check,
// as git treats a "racily clean" index entry.
const racyWindow = 2 * time.Second

// DefaultReloadInterval is the Reload.Interval the edge uses: a rotated file takes effect within
// a second, and the hot path costs an atomic load instead of a stat (about 50 ns against 2 µs).
const DefaultReloadInterval = time.Second

// Reload says how often key and token files are checked for change.
type Reload struct {
	// Interval is the least time between two stats of one file; 0 stats it on every use.
	Interval time.Duration
	// Clock is the time source of Interval; nil means time.Now.
	Clock func() time.Time
}

func (r Reload) validate() error {
	if r.Interval < 0 {
		return fmt.Errorf("key file reload interval %v is negative", r.Interval)
	}
	return nil
}

func (r Reload) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock()
}

// stamp identifies one version of a file's content, as far as stat can tell.
type stamp struct {
	dev, ino uint64
	size     int64
	mtime    int64
	ctime    int64
}

func stampOf(fi os.FileInfo) stamp {
	s := stamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.dev = uint64(st.Dev)
		s.ino = st.Ino
		s.ctime = st.Ctim.Nano()
	}
	return s
}

// entry is one immutable result of reading a file: the parsed value or the error.
type entry[T any] struct {
	stamp   stamp
	racy    bool
	checked time.Time
	value   T
	err     error
}

// fileCache holds the parsed content of one file and re-reads it only when stat says it changed.
//
// A file that fails to read or parse yields its error, naming the configuration key and the
// path, to every caller until it is fixed: the last good value is dropped on purpose, so a bad
// rotation fails nodes loudly instead of signing them with a key the operator meant to retire.
// A failed entry is read again at every check, so the fix is picked up at once.
type fileCache[T any] struct {
	key    string
	path   string
	parse  func(data []byte) (T, error)
	reload Reload

	cur atomic.Pointer[entry[T]]
	mu  sync.Mutex // serialises re-reads so a burst of nodes reads a changed file once
}

func newFileCache[T any](key, path string, reload Reload, parse func([]byte) (T, error)) *fileCache[T] {
	return &fileCache[T]{key: key, path: path, parse: parse, reload: reload}
}

// get returns the file's parsed content, re-reading it if it changed since the last check.
func (c *fileCache[T]) get() (T, error) {
	now := c.reload.now()
	if e := c.cur.Load(); e != nil && e.err == nil && now.Sub(e.checked) < c.reload.Interval {
		return e.value, nil
	}

	c.mu.Lock()
	defer c.mu.Unlock()

	// another caller may have refreshed it while this one waited
	e := c.cur.Load()
	if e != nil && e.err == nil && now.Sub(e.checked) < c.reload.Interval {
		return e.value, nil
	}

	e = c.refresh(e, now)
	c.cur.Store(e)
	return e.value, e.err
}

func (c *fileCache[T]) refresh(prev *entry[T], now time.Time) *entry[T] {
	fi, err := os.Stat(c.path)
	if err != nil {
		return &entry[T]{checked: now, err: c.wrap(err)}
	}
	st := stampOf(fi)
	if prev != nil && prev.err == nil && !prev.racy && prev.stamp == st {
		next := *prev
		next.checked = now
		return &next
	}

	data, err := os.ReadFile(c.path)
	if err != nil {
		return &entry[T]{checked: now, err: c.wrap(err)}
	}
	v, err := c.parse(data)
	if err != nil {
		return &entry[T]{checked: now, err: c.wrap(err)}
	}
	return &entry[T]{
		stamp:   st,
		racy:    fi.ModTime().After(now.Add(-racyWindow)),
		checked: now,
		value:   v,
	}
}

func (c *fileCache[T]) wrap(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		// the path is in our prefix already
		err = pe.Err
	}
	return fmt.Errorf("%s %s: %w", c.key, c.path, err)
}

// trimmed drops the surrounding white space an editor or `echo` leaves in a key file.
func trimmed(data []byte) string {
	return strings.TrimSpace(string(data))
}
