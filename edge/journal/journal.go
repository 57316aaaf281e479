// SPDX-License-Identifier: Apache-2.0

package journal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// Intent is one call that takes a node out of provisioning mode, about to be sent under a lease.
type Intent struct {
	Node string `json:"node"`
	// Step is restart, release_update or shutdown.
	Step   string `json:"step"`
	Lease  string `json:"lease"`
	Token  uint64 `json:"token"`
	Edge   string `json:"edge"`
	Region string `json:"region"`
	// At is the wall-clock time of the intent: the only clock that means anything after a restart.
	At time.Time `json:"at"`
}

func (in Intent) key() key { return key{node: in.Node, lease: in.Lease} }

func (in Intent) check() error {
	switch {
	case in.Node == "":
		return errors.New("intent names no node")
	case in.Lease == "":
		return fmt.Errorf("intent for %s names no lease", in.Node)
	case in.Step == "":
		return fmt.Errorf("intent for %s names no step", in.Node)
	}
	return nil
}

type key struct{ node, lease string }

var (
	// ErrLocked: another process holds the journal open.
	ErrLocked = errors.New("is locked")
	// ErrCorrupt: a complete line of the journal is not a record; the file is refused whole.
	ErrCorrupt = errors.New("not a journal record")
)

// record is one line of the file: an intent begun, or closed (only node and lease then).
type record struct {
	Op string `json:"op"`
	Intent
}

const (
	opBegin = "begin"
	opEnd   = "end"
	// compactAfter is how many records the file may hold beyond four per open intent before the
	// writer rewrites it with the open ones only.
	compactAfter = 4096
)

// Journal appends intents and their ends to one file; it is safe for concurrent use.
type Journal struct {
	path string
	reqs chan req
	done chan struct{}
	lock *os.File // flocked while open: two edges on one journal would settle each other's intents
	w    *writer  // read by Close only, after the writer goroutine ended
}

type req struct {
	rec   record
	reply chan error // nil for an end: nobody waits for it
}

// Open reads the journal at path (created with its directory if missing), returns the intents
// left open by the edge's previous run and rewrites the file with only those. log receives
// compaction failures (nil discards them).
func Open(path string, log *slog.Logger) (*Journal, []Intent, error) {
	return openLingering(path, log, linger)
}

func openLingering(path string, log *slog.Logger, linger time.Duration) (*Journal, []Intent, error) {
	if path == "" {
		return nil, nil, errors.New("journal: no path")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, fmt.Errorf("journal %s: %w", path, err)
	}
	lock, err := lockFile(path + ".lock")
	if err != nil {
		return nil, nil, fmt.Errorf("journal %s: %w", path, err)
	}
	open, err := read(path)
	if err != nil {
		_ = lock.Close()
		return nil, nil, err
	}
	f, err := rewrite(path, open)
	if err != nil {
		_ = lock.Close()
		return nil, nil, err
	}
	left := make([]Intent, 0, len(open))
	for _, in := range open {
		left = append(left, in)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &writer{path: path, f: f, open: open, records: len(open), log: log, linger: linger}
	j := &Journal{path: path, reqs: make(chan req, 1024), done: make(chan struct{}), lock: lock, w: w}
	go w.run(j.reqs, j.done)
	return j, left, nil
}

// Begin makes the intent durable; the call it announces may be sent once Begin returned nil.
func (j *Journal) Begin(ctx context.Context, in Intent) error {
	if err := in.check(); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	reply := make(chan error, 1)
	select {
	case j.reqs <- req{rec: record{Op: opBegin, Intent: in}, reply: reply}:
	case <-ctx.Done():
		return fmt.Errorf("journal %s: intent for %s: %w", j.path, in.Node, ctx.Err())
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		// The writer still writes it; an intent left open is settled by rediscovery.
		return fmt.Errorf("journal %s: intent for %s: %w", j.path, in.Node, ctx.Err())
	}
}

// End closes node's intent under lease, if it has one: its result's report was answered.
func (j *Journal) End(node, lease string) {
	j.reqs <- req{rec: record{Op: opEnd, Intent: Intent{Node: node, Lease: lease}}}
}

// Close writes what is queued and closes the file; the Journal must not be used after.
func (j *Journal) Close() error {
	close(j.reqs)
	<-j.done
	return errors.Join(j.w.broken, j.lock.Close())
}

// writer owns the file and the set of open intents; one goroutine runs it.
type writer struct {
	path    string
	f       *os.File
	open    map[key]Intent
	records int
	broken  error // a failed write or fsync: the file's state is unknown, so nothing is promised
	buf     []byte
	log     *slog.Logger
	linger  time.Duration
	syncs   atomic.Uint64 // fsyncs done
}

// linger is how long an intent waits for others to share its fsync. An fsync costs the edge
// about the same CPU whatever it holds, and the intent is written while the configure call is
// out, which takes longer: in the ten-region benchmark the journal's fsyncs were the largest
// part of what a cluster edge spends beyond a standalone one.
const linger = 10 * time.Millisecond

func (w *writer) run(reqs <-chan req, done chan<- struct{}) {
	defer close(done)
	defer func() { _ = w.f.Close() }()
	batch := make([]req, 0, 256)
	for r := range reqs {
		batch = w.gather(reqs, append(batch[:0], r))
		err := w.write(batch)
		for _, r := range batch {
			if r.reply != nil {
				r.reply <- err
			}
		}
		if err == nil && w.records > compactAfter && w.records > 4*len(w.open) {
			w.compact()
		}
	}
}

// gather adds what is queued to batch; once batch holds an intent it waits up to linger for more
// to share the fsync, until batch is full or the journal closes.
func (w *writer) gather(reqs <-chan req, batch []req) []req {
	var expired <-chan time.Time // nil until batch holds an intent
	for len(batch) < cap(batch) {
		if expired == nil && batch[len(batch)-1].rec.Op == opBegin {
			t := time.NewTimer(w.linger)
			defer t.Stop()
			expired = t.C
		}
		var r req
		ok := true
		if expired == nil {
			select {
			case r, ok = <-reqs:
			default:
				return batch
			}
		} else {
			select {
			case r, ok = <-reqs:
			case <-expired:
				return batch
			}
		}
		if !ok {
			return batch
		}
		batch = append(batch, r)
	}
	return batch
}

// needsSync is true when batch holds an intent, which is fsynced before its Begin returns.
func needsSync(batch []req) bool {
	for _, r := range batch {
		if r.rec.Op == opBegin {
			return true
		}
	}
	return false
}

// write appends a batch and, when it holds an intent, fsyncs once for all of them.
func (w *writer) write(batch []req) error {
	if w.broken != nil {
		return w.broken
	}
	w.buf = w.buf[:0]
	for _, r := range batch {
		line, err := json.Marshal(r.rec)
		if err != nil {
			return fmt.Errorf("journal %s: encode %s of %s: %w", w.path, r.rec.Op, r.rec.Node, err)
		}
		w.buf = append(append(w.buf, line...), '\n')
	}
	// The open set changes only once the whole batch encoded, so it always matches the file.
	sync := needsSync(batch)
	for _, r := range batch {
		switch r.rec.Op {
		case opBegin:
			w.open[r.rec.key()] = r.rec.Intent
		case opEnd:
			delete(w.open, r.rec.key())
		}
	}
	w.records += len(batch)
	if _, err := w.f.Write(w.buf); err != nil {
		w.broken = fmt.Errorf("journal %s: write: %w", w.path, err)
		return w.broken
	}
	if sync {
		w.syncs.Add(1)
		if err := w.f.Sync(); err != nil {
			w.broken = fmt.Errorf("journal %s: fsync: %w", w.path, err)
			return w.broken
		}
	}
	return nil
}

// compact replaces the file with the open intents; on failure the old file goes on.
func (w *writer) compact() {
	f, err := rewrite(w.path, w.open)
	if err != nil {
		w.log.Warn("could not compact the journal; it goes on growing", "error", err)
		return
	}
	_ = w.f.Close()
	w.f, w.records = f, len(w.open)
}
