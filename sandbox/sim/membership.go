// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// Members come and go as etcd's learners and Consul's autopilot have them: a member without raft
// state (its disk lost, or joining) is taken back in by the leader, which removes its voter
// entry, adds it as a learner and promotes it once its log caught up. Until then it does not
// vote (raft.go, grants), so a member that acknowledged entries before it lost them cannot help
// elect a leader without them.

// wipe kills the process and loses its disk: the ledger file and the raft log. When it starts
// again (restart) it is a member without state under its old id and address.
func (m *member) wipe(why string) {
	s := m.s
	if m.alive {
		s.stepDown(m, why)
		m.alive = false
		m.inc++
		m.failPending(errDead)
		m.shutdown()
	}
	m.inc++ // a restart the crash planned does not happen: whoever wiped it starts it
	if err := os.Remove(m.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.fail(fmt.Errorf("wipe %s: %w", m.name, err))
		return
	}
	m.applied, m.logLen, m.lastStamp, m.anchor, m.fresh = 0, 0, time.Time{}, nil, true
	for _, o := range s.members {
		for _, e := range o.pending {
			e.replicated[m.id] = false
		}
	}
	for _, e := range s.raft.limbo {
		e.replicated[m.id] = false
	}
	s.stats.Wipes++
	s.tracef(nil, m.name, "%s: its ledger and raft log are gone", why)
	s.raft.changed(s)
}

// startIn starts a stopped member after d: on its file, or without state after a wipe.
func (m *member) startIn(d time.Duration) {
	inc := m.inc
	m.s.after(d, func() {
		if !m.alive && m.inc == inc {
			m.restart()
		}
	})
}

// inConfig says whether m is in the raft configuration, as a voter or a learner.
func (m *member) inConfig() bool { return m.voter || m.learner }

// admit is the leader's side of taking members in, run every second: a voter without state is
// made a learner (its old voter entry removed), a member outside the configuration that runs is
// added as a learner, and a learner whose log caught up is promoted. Each change needs the
// leader's quorum in the configuration after it. With Options.WipedVotes a member without state
// stays the voter it was (the old behaviour).
func (s *Sim) admit() {
	l := s.raft.leader
	if l == nil || !l.alive || !l.ready || !s.raft.quorum(s, l) {
		return
	}
	for _, m := range s.members {
		if m == l || !m.alive || !s.connected(l, m) {
			continue
		}
		switch {
		case m.voter && m.fresh && !s.opts.WipedVotes:
			m.voter = false
			if !s.raft.quorum(s, l) {
				m.voter = true // the removal would not commit
				continue
			}
			m.learner = true
			s.stats.ConfChanges++
			s.tracef(nil, l.name, "takes %s back in: its voter entry removed, added as a learner", m.name)
		case !m.inConfig():
			m.learner, m.fresh = true, true
			s.stats.ConfChanges++
			s.tracef(nil, l.name, "adds %s as a learner", m.name)
		case m.learner && m.logLen >= uint64(len(s.raft.log)):
			m.voter, m.learner, m.fresh = true, false, false
			s.stats.ConfChanges++
			s.tracef(nil, l.name, "promotes %s to a voter (log at %d)", m.name, m.logLen)
		}
	}
	s.raft.changed(s)
}

// remove takes m out of the configuration (RemoveServer) through leader l and stops it.
func (s *Sim) remove(l, m *member) bool {
	m.voter, m.learner = false, false
	if !s.raft.quorum(s, l) {
		m.voter = true
		return false
	}
	s.stats.ConfChanges++
	s.tracef(nil, l.name, "removes %s from the configuration", m.name)
	m.wipe("removed from the cluster and decommissioned")
	return true
}

// settledConfig says whether every member is a voter with its state: a membership fault starts
// only then, one at a time, as an operator replaces one member at a time.
func (s *Sim) settledConfig() bool {
	for _, m := range s.members {
		if !m.voter || m.fresh {
			return false
		}
	}
	return !s.changing && s.raft.quietUntil <= s.now && !s.raft.recovering
}

// install catches m up from leader l's snapshot, as raft's InstallSnapshot brings a member
// without state up to date: the real ledger's Snapshot, Persist and Restore. The checker
// compares the restored digest where it knows the history's.
func (m *member) install(l *member) {
	s := m.s
	snap, err := l.ledger.Snapshot()
	if err != nil {
		s.fail(fmt.Errorf("snapshot of %s for %s: %w", l.name, m.name, err))
		return
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		s.fail(fmt.Errorf("snapshot of %s for %s: %w", l.name, m.name, err))
		return
	}
	if err := m.ledger.Restore(io.NopCloser(&sink.buf)); err != nil {
		s.fail(fmt.Errorf("install snapshot of %s on %s: %w", l.name, m.name, err))
		return
	}
	idx, _, err := m.ledger.AppliedIndex()
	if err != nil {
		s.fail(fmt.Errorf("install snapshot on %s: %w", m.name, err))
		return
	}
	m.applied, m.logLen = idx, max(m.logLen, idx)
	if m.lastStamp, err = m.ledger.LastStamp(); err != nil {
		s.fail(err)
		return
	}
	s.tracef(nil, m.name, "installed %s's snapshot at index %d", l.name, idx)
	if idx%16 == 0 {
		s.check.digest(m, idx)
	}
}

// memSink is a raft.SnapshotSink in memory.
type memSink struct{ buf bytes.Buffer }

func (k *memSink) Write(p []byte) (int, error) { return k.buf.Write(p) }
func (k *memSink) Close() error                { return nil }
func (k *memSink) ID() string                  { return "sim" }
func (k *memSink) Cancel() error               { return nil }
