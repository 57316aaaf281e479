// SPDX-License-Identifier: Apache-2.0

// Package recorder appends every action a sandbox node receives to one JSON-lines file.
//
// Many goroutines and many processes (each real node is its own process) append to the same
// file. The file is opened with O_APPEND and every record is written with exactly one write(2)
// of one complete line, so the kernel places each line atomically at the end of the file and
// lines from different processes never interleave (true for local file systems such as ext4
// and tmpfs). Within a process a mutex serialises the writes.
//
// A node records each request it handles once its reply is known and before the reply is
// published, so a caller holding a reply finds its line. Real nodes record through a wrapper
// around each agent (fleet/realnode): rpcutil and choria_provision always, discovery (as
// discovery#ping) only when the lab asks for it; emulated nodes follow the same rule.
package recorder

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
)

// Sink receives actions; *Recorder implements it, and tests may pass their own.
type Sink interface {
	Record(Action)
}

// Recorder appends actions as JSON lines to a file shared by many processes.
type Recorder struct {
	mu     sync.Mutex
	f      *os.File
	path   string
	log    *slog.Logger
	failed int
	closed bool
}

var _ Sink = (*Recorder)(nil)

// Open opens (creating if needed) the JSON-lines file at path for appending.
func Open(path string, log *slog.Logger) (*Recorder, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open action log %s: %w", path, err)
	}
	return &Recorder{f: f, path: path, log: log}, nil
}

// Path is the file the recorder appends to.
func (r *Recorder) Path() string { return r.path }

// Record appends one action. A failed write is logged and counted, never fatal to the node.
func (r *Recorder) Record(a Action) {
	if err := r.Write(a); err != nil {
		r.log.Error("record action", "node", a.Node, "action", a.Action, "error", err)
	}
}

// Write appends one action and reports a failure to the caller.
func (r *Recorder) Write(a Action) error {
	line, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("encode action %s for %s: %w", a.Action, a.Node, err)
	}
	line = append(line, '\n')

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		r.failed++
		return errors.New("recorder is closed")
	}
	n, err := r.f.Write(line)
	if err == nil && n != len(line) {
		err = fmt.Errorf("short write: %d of %d bytes", n, len(line))
	}
	if err != nil {
		r.failed++
		return fmt.Errorf("append to %s: %w", r.path, err)
	}
	return nil
}

// Failed is how many records could not be written.
func (r *Recorder) Failed() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

// Close closes the file; later records fail and are counted.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	if err := r.f.Close(); err != nil {
		return fmt.Errorf("close action log %s: %w", r.path, err)
	}
	return nil
}
