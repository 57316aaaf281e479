// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"fmt"
	"io"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"
)

// FSM adapts a Ledger to raft.FSM; it only delegates, so the ledger's command processing can be
// driven directly by tests and by recovery tools.
type FSM struct{ l *Ledger }

var (
	_ raft.FSM         = (*FSM)(nil)
	_ raft.BatchingFSM = (*FSM)(nil)
)

// FSM returns the raft.FSM view of the ledger.
func (l *Ledger) FSM() *FSM { return &FSM{l: l} }

// Apply applies one committed log entry.
func (f *FSM) Apply(lg *raft.Log) any { return f.l.ApplyLogs([]*raft.Log{lg})[0] }

// ApplyBatch applies committed entries in one bbolt transaction.
func (f *FSM) ApplyBatch(logs []*raft.Log) []any { return f.l.ApplyLogs(logs) }

// Snapshot pins the current state; the copy happens in Persist.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) { return f.l.Snapshot() }

// Restore replaces all state with the snapshot's.
func (f *FSM) Restore(rc io.ReadCloser) error {
	return f.l.Restore(rc)
}

// AppliedIndex is the index and term of the last entry the ledger file holds.
func (f *FSM) AppliedIndex() (index, term uint64, err error) { return f.l.AppliedIndex() }

// ApplyLogs applies entries in order inside ONE bbolt write transaction that also stores the last
// entry's index and term, so the ledger is never ahead of or behind what it says it applied.
// Entries at or below the stored applied index are skipped: Raft replays the log tail after a
// restart and the ledger already holds their effect. A refused command is its entry's result; a
// storage failure or an entry that does not decode panics with nothing of the batch applied,
// because skipping an entry would let this member diverge from the others.
func (l *Ledger) ApplyLogs(logs []*raft.Log) []any {
	out := make([]any, len(logs))
	applied := l.applied.Load()
	var last *raft.Log
	for _, lg := range logs {
		if lg.Index > applied {
			last = lg
		}
	}
	if last == nil {
		return out
	}
	l.haltOnUnknown(logs, applied)
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.db == nil {
		panic(fmt.Sprintf("ledger %s: apply at index %d after close", l.path, last.Index))
	}
	var t *txn
	err := l.db.Update(func(tx *bolt.Tx) error {
		t = newTxn(tx)
		t.eventMemory = l.opts.EventMemory
		for i, lg := range logs {
			if lg.Index <= applied || lg.Type != raft.LogCommand {
				continue
			}
			r := l.applyOne(t, lg.Index, lg.Data)
			if se, ok := r.(storageError); ok {
				return fmt.Errorf("index %d: %w", lg.Index, se.error)
			}
			if u, ok := r.(undecodable); ok {
				l.log.Error("halting this member: a committed entry does not decode (its copy here is corrupt, or this build cannot read it); restarted, the member reads it again",
					"index", lg.Index, "term", lg.Term, "bytes", len(lg.Data), "error", u.error)
				return fmt.Errorf("index %d: %w", lg.Index, u.error)
			}
			out[i] = r
		}
		return t.finish(last.Index, last.Term)
	})
	if err != nil {
		panic(fmt.Sprintf("ledger %s: apply: %v", l.path, err))
	}
	l.applied.Store(last.Index)
	l.commits.Add(1)
	if l.opts.OnApply != nil {
		l.opts.OnApply(Applied{Index: last.Index, Regions: t.changedRegions(), PauseChanged: t.pauseChanged, Stamp: t.stamp})
	}
	return out
}

// haltOnUnknown stops this member before it applies anything of a batch holding a command type it
// does not know and may not ignore (as Nomad and Consul do), or a cluster protocol above the one
// it applies (entries it does not understand follow): refusing the entry and moving on
// would let an older member silently diverge from the others and perhaps lead later. After an
// upgrade, raft replays the batch.
func (l *Ledger) haltOnUnknown(logs []*raft.Log, applied uint64) {
	for _, lg := range logs {
		if lg.Index <= applied || lg.Type != raft.LogCommand || len(lg.Data) == 0 {
			continue
		}
		if typ := CommandType(lg.Data[0]); !typ.known() && typ&IgnoreUnknown == 0 {
			l.log.Error("unknown ledger command: halting this member; upgrade it to a version that knows the type", "type", uint8(typ), "index", lg.Index)
			panic(fmt.Sprintf("ledger %s: %v: type %d at index %d", l.path, ErrUnknownCommand, uint8(typ), lg.Index))
		}
		if why := protocolTooNew(lg); why != "" {
			l.log.Error("halting this member: "+why, "index", lg.Index)
			panic(fmt.Sprintf("ledger %s: %s (index %d)", l.path, why, lg.Index))
		}
	}
}
