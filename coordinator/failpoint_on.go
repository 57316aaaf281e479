// SPDX-License-Identifier: Apache-2.0

//go:build muster_failpoints

package coordinator

import (
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/coordinator/raftnode"
)

// FailpointsDirEnv names the directory a test-only build reads its failpoints from. Only a
// binary built with -tags muster_failpoints reads it; a release build has no such code.
const FailpointsDirEnv = "MUSTER_FAILPOINTS_DIR"

// ClockStepFile, in the failpoints directory, holds a Go duration ("90s", "-2m") added to every
// reading of the member's wall clock: a stepped clock, as NTP or an operator would step it.
const ClockStepFile = "clock-step"

// failpointClockStep is the wall clock step the failpoint file asks for; 0 when there is none or
// it cannot be parsed (a failpoint must never stop a member).
func failpointClockStep() time.Duration {
	dir := os.Getenv(FailpointsDirEnv)
	if dir == "" {
		return 0
	}
	b, err := os.ReadFile(filepath.Join(dir, ClockStepFile))
	if err != nil {
		return 0
	}
	d, err := time.ParseDuration(strings.TrimSpace(string(b)))
	if err != nil {
		return 0
	}
	return d
}

// ApplyTraceFile, in the failpoints directory, receives one line per batch of entries raft
// hands the ledger: the ledger's applied index before and after, and each entry's index, term,
// type and first bytes. It is how a diverged ledger (chaos compares every member's) is traced to
// the entry it missed.
const ApplyTraceFile = "apply.trace"

// tracedFSM writes ApplyTraceFile beside the ledger's FSM.
type tracedFSM struct {
	*ledger.FSM
	mu sync.Mutex
	f  *os.File
}

// traceFSM wraps fsm when the failpoints directory is set; a failure to open the file leaves it bare.
func traceFSM(fsm *ledger.FSM) raftnode.FSM {
	dir := os.Getenv(FailpointsDirEnv)
	if dir == "" {
		return fsm
	}
	f, err := os.OpenFile(filepath.Join(dir, ApplyTraceFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fsm
	}
	fmt.Fprintf(f, "%s pid %d open\n", time.Now().UTC().Format(time.RFC3339Nano), os.Getpid())
	return &tracedFSM{FSM: fsm, f: f}
}

func (t *tracedFSM) Apply(lg *raft.Log) any { return t.ApplyBatch([]*raft.Log{lg})[0] }

func (t *tracedFSM) ApplyBatch(logs []*raft.Log) []any {
	before, _, _ := t.AppliedIndex()
	out := t.FSM.ApplyBatch(logs)
	after, _, _ := t.AppliedIndex()
	var b strings.Builder
	fmt.Fprintf(&b, "%s pid %d applied %d -> %d:", time.Now().UTC().Format("15:04:05.000000"), os.Getpid(), before, after)
	for i, lg := range logs {
		d := lg.Data
		if len(d) > 24 {
			d = d[:24]
		}
		res := "nil"
		if out[i] != nil {
			res = fmt.Sprintf("%T", out[i])
			if err, ok := out[i].(error); ok {
				res = "err:" + err.Error()
				if len(res) > 80 {
					res = res[:80]
				}
			}
		}
		fmt.Fprintf(&b, " [%d t%d %v %q %s]", lg.Index, lg.Term, lg.Type, d, res)
	}
	b.WriteByte('\n')
	t.mu.Lock()
	_, _ = t.f.WriteString(b.String())
	t.mu.Unlock()
	return out
}

// checkLogs wraps raft's log store when the failpoints directory is set: each entry's checksum is
// kept as it is stored, and an entry read back with other bytes (a copy changed in memory after it
// was stored) is logged with where it came from. Chaos diverged a ledger through such a copy.
func checkLogs(log *slog.Logger) func(raft.LogStore) raft.LogStore {
	if os.Getenv(FailpointsDirEnv) == "" {
		return nil
	}
	return func(s raft.LogStore) raft.LogStore {
		return &checkedLogs{LogStore: s, log: log, sums: map[uint64]uint32{}}
	}
}

type checkedLogs struct {
	raft.LogStore
	log  *slog.Logger
	mu   sync.Mutex
	sums map[uint64]uint32 // index -> crc32 of the data stored there by this process
}

func (c *checkedLogs) StoreLog(l *raft.Log) error { return c.StoreLogs([]*raft.Log{l}) }

func (c *checkedLogs) StoreLogs(logs []*raft.Log) error {
	c.mu.Lock()
	for _, l := range logs {
		c.sums[l.Index] = crc32.ChecksumIEEE(l.Data)
	}
	c.mu.Unlock()
	return c.LogStore.StoreLogs(logs)
}

func (c *checkedLogs) GetLog(index uint64, l *raft.Log) error {
	if err := c.LogStore.GetLog(index, l); err != nil {
		return err
	}
	c.mu.Lock()
	want, ok := c.sums[index]
	if !ok {
		c.sums[index] = crc32.ChecksumIEEE(l.Data)
	}
	c.mu.Unlock()
	if got := crc32.ChecksumIEEE(l.Data); ok && got != want {
		head := l.Data
		if len(head) > 48 {
			head = head[:48]
		}
		c.log.Error("FAILPOINT CHECK: a raft log entry read back differs from what was stored",
			"index", index, "term", l.Term, "type", l.Type, "bytes", len(l.Data), "stored_crc", want, "read_crc", got, "head", fmt.Sprintf("%q", head))
	}
	return nil
}

func (c *checkedLogs) DeleteRange(min, max uint64) error {
	c.mu.Lock()
	// The map, not the range: a compaction deletes from the log's first index on.
	for i := range c.sums {
		if i >= min && i <= max {
			delete(c.sums, i)
		}
	}
	c.mu.Unlock()
	return c.LogStore.DeleteRange(min, max)
}
