// SPDX-License-Identifier: Apache-2.0

package edgebench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/seed96588659/muster/sandbox/fleet/audit"
	"github.com/seed96588659/muster/sandbox/fleet/recorder"
)

// restartWatch follows a lab's actions.jsonl as it grows and keeps the successful restarts: each
// poll reads only what was appended since the last one, so following 40,000 lines stays cheap
// beside the run it measures.
type restartWatch struct {
	path    string
	offset  int64
	partial []byte
	// restarted holds each node's first successful restart.
	restarted   map[string]time.Time
	first, last time.Time
}

func newRestartWatch(path string) *restartWatch {
	return &restartWatch{path: path, restarted: map[string]time.Time{}}
}

// poll reads the lines appended since the last poll and returns how many nodes have restarted.
func (w *restartWatch) poll() (int, error) {
	f, err := os.Open(w.path)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("open actions: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(w.offset, io.SeekStart); err != nil {
		return 0, fmt.Errorf("seek actions to %d: %w", w.offset, err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return 0, fmt.Errorf("read actions: %w", err)
	}
	w.offset += int64(len(data))
	data = append(w.partial, data...)
	// A writer may be half way through a line: keep the tail for the next poll.
	cut := bytes.LastIndexByte(data, '\n') + 1
	w.partial = append([]byte(nil), data[cut:]...)
	for line := range bytes.SplitSeq(data[:cut], []byte("\n")) {
		if !bytes.Contains(line, []byte(audit.Restart)) {
			continue
		}
		var a recorder.Action
		if err := json.Unmarshal(line, &a); err != nil {
			return 0, fmt.Errorf("actions line %q: %w", line, err)
		}
		if a.Action != audit.Restart || !a.OK {
			continue
		}
		if _, seen := w.restarted[a.Node]; seen {
			continue
		}
		w.restarted[a.Node] = a.Time
		if w.first.IsZero() || a.Time.Before(w.first) {
			w.first = a.Time
		}
		if a.Time.After(w.last) {
			w.last = a.Time
		}
	}
	return len(w.restarted), nil
}
