// SPDX-License-Identifier: Apache-2.0

// Package callhistory records an edge's calls to the coordinators (register, acquire, renew,
// report) as JSON lines: one record when a call is invoked, one when it returns, each with the
// machine's monotonic clock, so that the histories of several edge processes on one machine can
// be merged and checked for linearizability (the sandbox's chaos suite does).
package callhistory

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seed96588659/muster/pkg/api"
)

// Phase tells a call's invocation record from its return record.
type Phase string

// The two records of one call.
const (
	PhaseCall   Phase = "call"
	PhaseReturn Phase = "return"
)

// Record is one line of a call history.
type Record struct {
	// Run is the writing process's random id; with Seq it pairs a call with its return.
	Run   string       `json:"run"`
	Seq   uint64       `json:"seq"`
	Edge  string       `json:"edge"`
	Phase Phase        `json:"phase"`
	Kind  api.CallKind `json:"kind"`
	// Mono is CLOCK_MONOTONIC in nanoseconds: one clock for every process of the machine, never
	// stepped. Wall is the wall clock, for people reading the file.
	Mono int64     `json:"mono"`
	Wall time.Time `json:"wall"`
	// Request is the request as sent, on the call record.
	Request json.RawMessage `json:"request,omitempty"`
	// Response is the answer, on the return record of a call that succeeded.
	Response json.RawMessage `json:"response,omitempty"`
	// Error is why the call failed; Status and Code are the coordinator's refusal when it gave one.
	Error  string   `json:"error,omitempty"`
	Status int      `json:"status,omitempty"`
	Code   api.Code `json:"code,omitempty"`
}

// Monotonic is the clock records carry: CLOCK_MONOTONIC in nanoseconds.
func Monotonic() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}

// Writer appends an edge's calls to a file; its Observe is an api.CallObserver.
type Writer struct {
	f    *os.File
	run  string
	edge string
	log  *slog.Logger
	seq  atomic.Uint64
	mu   sync.Mutex
	// failed is set at the first write error, which is logged once: a history with a gap
	// cannot be checked, but the edge goes on provisioning.
	failed atomic.Bool
}

// Open appends edge's calls to the file at path, which a restarted edge extends; log receives
// a write failure (nil discards it).
func Open(path, edge string, log *slog.Logger) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("call history: %w", err)
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Writer{f: f, run: hex.EncodeToString(b[:]), edge: edge, log: log}, nil
}

// Observe records the invocation of a call and returns the function that records its return.
func (w *Writer) Observe(kind api.CallKind, req any) func(resp any, err error) {
	seq := w.seq.Add(1)
	rec := Record{Run: w.run, Seq: seq, Edge: w.edge, Phase: PhaseCall, Kind: kind, Mono: Monotonic(), Wall: time.Now()}
	rec.Request = w.marshal(req)
	w.write(rec)
	return func(resp any, err error) {
		ret := Record{Run: w.run, Seq: seq, Edge: w.edge, Phase: PhaseReturn, Kind: kind, Mono: Monotonic(), Wall: time.Now()}
		if err != nil {
			ret.Error = err.Error()
			var ae *api.Error
			if errors.As(err, &ae) {
				ret.Status, ret.Code = ae.Status, ae.Code
			}
		} else {
			ret.Response = w.marshal(resp)
		}
		w.write(ret)
	}
}

func (w *Writer) marshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		w.fail(err)
		return nil
	}
	return b
}

// write appends one line in one write, so a process killed at any moment leaves whole lines
// behind (an unfinished last line is skipped by ReadFrom).
func (w *Writer) write(rec Record) {
	b, err := json.Marshal(rec)
	if err != nil {
		w.fail(err)
		return
	}
	b = append(b, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.f.Write(b); err != nil {
		w.fail(err)
	}
}

func (w *Writer) fail(err error) {
	if !w.failed.Swap(true) {
		w.log.Error("call history: a record was not written; the history has a gap", "error", err)
	}
}

// Close closes the file; calls returning later are not recorded.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.f.Close()
}

// ReadFrom reads the whole records of the file at path from byte offset on and returns the
// offset after the last complete line, where the next read starts. A file not there yet holds
// no records.
func ReadFrom(path string, offset int64) ([]Record, int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, offset, nil
	}
	if err != nil {
		return nil, offset, fmt.Errorf("call history: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, offset, fmt.Errorf("call history %s: %w", path, err)
	}
	rd := bufio.NewReaderSize(f, 1<<16)
	var out []Record
	for {
		line, err := rd.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			// An unfinished line: its writer is still writing it, or was killed mid-write.
			return out, offset, nil
		}
		if err != nil {
			return out, offset, fmt.Errorf("call history %s: %w", path, err)
		}
		start := offset
		offset += int64(len(line))
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var rec Record
		if err := json.Unmarshal(line, &rec); err != nil {
			return out, offset, fmt.Errorf("call history %s at byte %d: %w", path, start, err)
		}
		out = append(out, rec)
	}
}
