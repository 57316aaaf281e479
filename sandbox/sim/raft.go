// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/raft"
	"github.com/seed96588659/muster/coordinator/ledger"
)

// A simple Raft, enough for the lease protocol's argument: one committed log; a leader appends
// proposals that commit, in order, after a delay once it reaches a quorum; a leader that loses
// its quorum steps down after its leader lease, while the members that can still form a majority
// elect another after an election timeout (the two may overlap: an unaware old leader only ever
// fails to commit). An entry the old leader had replicated to its successor may still commit
// in the next term although its proposer was told the leadership was lost, as in raft.
//
// Each member's raft log is the committed log's prefix up to its logLen: the leader and the
// followers that acknowledged an entry (a majority of the voters) hold it at its commit, the
// others when they catch up. A voter grants its vote only to a candidate whose log is at least
// as long as its own, so a leader always holds every committed entry; where that fails (a
// member that lost its disk voting, or a recover) the elected leader's log is the cluster's and
// the entries beyond it are lost, as in raft (truncate).
//
// The configuration is each member's voter and learner flags (member.go): quorums count voters.
// A member without raft state (wiped) never votes until the leader took it back in: its voter
// entry removed, added as a learner, promoted once caught up (admit). Options.WipedVotes
// restores the old rule, under which it rejoins as the voter it was and votes for anyone.

const (
	leaderLease = 500 * time.Millisecond
	minElection = 500 * time.Millisecond
	maxElection = 1500 * time.Millisecond
)

// errDead is a proposal or request of a member process that crashed.
var errDead = errors.New("member process is down")

// errClosed is a proposal still waiting when the run ended.
var errClosed = errors.New("simulation over")

// entry is one log entry: proposed by a leader, committed at most once.
type entry struct {
	index, term uint64
	data        []byte
	cmd         ledger.Command
	by          *member
	proposedAt  int64
	commitAt    int64
	// replicated marks the members the entry reached (before its leader was deposed, or for
	// its commit).
	replicated [3]bool
	// wake resumes the proposing task; nil once it was answered.
	wake      chan outcome
	committed bool
	// observed is set once the checker saw the entry's result (on the first member to apply it).
	observed bool
	// stampErr says why the entry's stamp is not its proposer's anchored ledger time.
	stampErr string
}

type raftState struct {
	term   uint64
	leader *member
	// prev led before the current leader was lost: a quick election may choose it again.
	prev *member
	log  []*entry
	// limbo holds the entries a deposed leader of the current term had not committed: the next
	// leader commits those it has.
	// quietUntil is when membership faults may start again after a recover: scheduling only, the
	// hold on grants itself is the real lease manager's (fault_recover.go).
	quietUntil int64
	limbo      []*entry
	electing   bool
	// flap is the chance an election picks the previous leader when it can win.
	flap float64
	// lostTo is the log length a recover rewound the log to, the entries after it lost with the
	// majority: the checker forgets what they acknowledged.
	lostTo uint64
	// recovering is set from a recover until its survivor leads: the truncation is the recover's.
	recovering bool
}

// connected says whether members a and b can exchange raft messages.
func (s *Sim) connected(a, b *member) bool {
	return a.alive && b.alive && (a == b || !s.net.isCut(a.id, b.id))
}

// quorum says whether m reaches a majority of the voters, itself included.
func (r *raftState) quorum(s *Sim, m *member) bool {
	n := 0
	for _, o := range s.members {
		if o.voter && s.connected(m, o) {
			n++
		}
	}
	return n*2 > s.voters()
}

// voters is the number of voters in the configuration.
func (s *Sim) voters() int {
	n := 0
	for _, m := range s.members {
		if m.voter {
			n++
		}
	}
	return n
}

// wins says whether candidate c gets the votes of a majority of the voters: those it reaches
// whose logs are no longer than its own, and that may vote at all.
func (r *raftState) wins(s *Sim, c *member) bool {
	if !c.alive || !c.voter || c.fresh && !s.opts.WipedVotes {
		return false
	}
	n := 0
	for _, v := range s.members {
		if v.voter && s.connected(c, v) && (v == c || s.grants(v, c)) {
			n++
		}
	}
	return n*2 > s.voters()
}

// grants is raft's vote rule: v votes for c when c's log is at least as up to date as v's. A
// member without raft state has the emptiest log, so it votes for anyone, unless the learner
// rule keeps it from voting until it is taken back in.
func (s *Sim) grants(v, c *member) bool {
	if v.fresh && !s.opts.WipedVotes {
		return false
	}
	return v.logLen <= c.logLen
}

// changed reacts to a change of connectivity or liveness: a leader without quorum steps down
// after its lease, members that hear no leader elect one, a deposed leader that hears the new
// term steps down, and followers that hear the leader catch up.
func (r *raftState) changed(s *Sim) {
	l := r.leader
	if l != nil && !r.quorum(s, l) && !l.stepDownPlanned {
		l.stepDownPlanned = true
		term := l.term
		s.after(leaderLease, func() {
			l.stepDownPlanned = false
			if l.role == roleLeader && l.term == term && !r.quorum(s, l) {
				s.stepDown(l, "lost its quorum")
			}
		})
	}
	if !r.electing && (l == nil || !r.quorum(s, l)) {
		r.electing = true
		s.after(s.between(minElection, maxElection), func() { r.elect(s) })
	}
	for _, m := range s.members {
		if m.role == roleLeader && m != r.leader && m.term < r.term {
			for _, o := range s.members {
				if o != m && s.connected(m, o) && (o == r.leader || r.leader != nil && s.connected(o, r.leader)) {
					s.stepDown(m, fmt.Sprintf("saw term %d", r.term))
					break
				}
			}
		}
	}
	if r.leader != nil {
		for _, m := range s.members {
			if m != r.leader && s.connected(m, r.leader) {
				m.catchUpSoon()
			}
		}
	}
}

// elect chooses a new leader among the members that can reach a majority.
func (r *raftState) elect(s *Sim) {
	r.electing = false
	if r.leader != nil && r.leader.role == roleLeader && r.quorum(s, r.leader) {
		return
	}
	var cands []*member
	for _, m := range s.members {
		if r.wins(s, m) {
			cands = append(cands, m)
		}
	}
	if len(cands) == 0 {
		r.electing = true
		s.after(300*time.Millisecond, func() { r.elect(s) })
		return
	}
	n := pick(s, cands)
	if r.prev != nil && slices.Contains(cands, r.prev) && s.chance(r.flap) {
		n = r.prev
	}
	if n.role == roleLeader {
		s.stepDown(n, "a new election")
	}
	old := r.leader
	// Entries of the ending term that reached n commit now, in order: n has them in its log.
	var carried []*entry
	if old != nil && old.role == roleLeader && old.term == r.term {
		carried = append(carried, old.pending...)
	}
	carried = append(carried, r.limbo...)
	slices.SortFunc(carried, func(a, b *entry) int { return int(a.index) - int(b.index) })
	r.limbo = nil
	if n.logLen < uint64(len(r.log)) {
		s.truncate(n)
		carried = nil
	}
	for _, e := range carried {
		if e.committed || e.index != uint64(len(r.log))+1 || (e.by != n && !e.replicated[n.id]) {
			break
		}
		s.commitEntry(e, nil)
		// Raft commits them only with the new leader's first entry, once a majority holds
		// them: n won a majority it reaches, so they hold them from now on. Without this an
		// entry held by n alone counted as committed, and applied, while a later election
		// could rightly pass it by.
		s.replicate(e, n)
		s.checkHeld(e)
	}
	n.logLen = uint64(len(r.log))
	r.recovering = false
	r.term++
	r.leader = n
	n.role, n.term, n.ready = roleLeader, r.term, false
	s.stats.LeaderChanges++
	s.tracef(nil, n.name, "elected leader of term %d (log at %d, carried %d entries of the last term)", r.term, len(r.log), len(carried))
	term := r.term
	// Barrier waits until the new leader applied every committed entry: usually milliseconds,
	// now and then seconds (a backlog, a slow disk).
	barrier := s.between(time.Millisecond, 20*time.Millisecond)
	if s.chance(0.2) {
		barrier = s.between(100*time.Millisecond, 2*time.Second)
	}
	s.after(barrier, func() { n.establish(term) })
	r.changed(s)
}

// stepDown ends m's leadership: not ready, lease manager disabled, proposals failed.
func (s *Sim) stepDown(m *member, why string) {
	if m.role != roleLeader {
		return
	}
	s.tracef(nil, m.name, "steps down from term %d: %s", m.term, why)
	m.role, m.ready = roleFollower, false
	m.anchor = nil
	if m.mgr != nil {
		m.mgr.Disable()
	}
	r := &s.raft
	if r.leader == m {
		r.leader, r.prev = nil, m
		for _, e := range m.pending {
			if !e.committed && e.term == r.term {
				r.limbo = append(r.limbo, e)
			}
		}
	}
	m.failPending(raft.ErrLeadershipLost)
	r.changed(s)
}

// propose appends cmd to m's log; it runs on a task's goroutine and parks until the entry
// commits or m's leadership ends.
func (m *member) propose(inc int, cmd ledger.Command) (any, error) {
	return m.proposeSince(inc, cmd, 0)
}

// proposeSince is propose of a command whose stamp may have been taken since real time since
// (0: now), while its request was served.
func (m *member) proposeSince(inc int, cmd ledger.Command, since int64) (any, error) {
	s := m.s
	if !m.alive || m.inc != inc {
		return nil, errDead
	}
	if m.role != roleLeader {
		return nil, raft.ErrNotLeader
	}
	data, err := ledger.EncodeCommand(cmd)
	if err != nil {
		return nil, fmt.Errorf("propose on %s: %w", m.name, err)
	}
	e := &entry{
		index: uint64(len(s.raft.log)+len(m.pending)) + 1, term: m.term, data: data, cmd: cmd, by: m,
		proposedAt: s.now, wake: make(chan outcome, 1),
	}
	e.stampErr = m.checkStamp(cmd, since)
	e.commitAt = s.now + int64(s.commitDelay()+s.quorumDelay(m))
	if k := len(m.pending); k > 0 {
		e.commitAt = max(e.commitAt, m.pending[k-1].commitAt)
	}
	for _, o := range s.members {
		e.replicated[o.id] = o == m || o.inConfig() && s.connected(m, o) && s.chance(0.7)
	}
	m.pending = append(m.pending, e)
	s.at(e.commitAt, func() { s.tryCommit(m) })
	o := s.park(e.wake)
	return o.res, o.err
}

// commitDelay is a commit's round trip to a quorum, now and then slow (a busy disk).
func (s *Sim) commitDelay() time.Duration {
	if s.chance(0.02) {
		return s.between(100*time.Millisecond, 800*time.Millisecond)
	}
	return s.between(500*time.Microsecond, 10*time.Millisecond)
}

// tryCommit commits m's due proposals while m leads the current term with a quorum.
func (s *Sim) tryCommit(m *member) {
	r := &s.raft
	for len(m.pending) > 0 {
		e := m.pending[0]
		if e.commitAt > s.now || e.committed {
			if e.committed {
				m.pending = m.pending[1:]
				continue
			}
			return
		}
		if !m.alive || m.role != roleLeader || r.leader != m || m.term != r.term {
			return
		}
		if !r.quorum(s, m) {
			if !m.commitRetry {
				m.commitRetry = true
				s.after(50*time.Millisecond, func() { m.commitRetry = false; s.tryCommit(m) })
			}
			return
		}
		m.pending = m.pending[1:]
		s.commitEntry(e, m)
		if !m.alive {
			return
		}
	}
}

// commitEntry appends e to the committed log; leader (nil for an entry carried over an
// election) applies it at once and answers the proposer.
func (s *Sim) commitEntry(e *entry, leader *member) {
	r := &s.raft
	if e.index != uint64(len(r.log))+1 {
		s.fail(fmt.Errorf("entry %d committed at log length %d", e.index, len(r.log)))
		return
	}
	e.committed = true
	r.log = append(r.log, e)
	s.stats.Entries++
	s.replicate(e, leader)
	if leader != nil {
		s.checkHeld(e)
	}
	for _, m := range s.members {
		if m != leader && r.leader != nil && s.connected(m, r.leader) {
			m.catchUpSoon()
		}
	}
	if leader == nil {
		return
	}
	if leader.applied >= e.index {
		// Its ledger applied a lost entry at this index (truncate): raft cannot unapply it, and
		// the entry committed now is never applied there.
		s.tracef(nil, leader.name, "entry %d committed, but its ledger applied a lost entry %d already", e.index, e.index)
		if e.wake != nil {
			w := e.wake
			e.wake = nil
			s.resume(w, outcome{err: fmt.Errorf("%s: ledger diverged at entry %d", leader.name, e.index)})
		}
		return
	}
	res := leader.applyTo(e.index)
	if appliesReport(e.cmd) && leader.crashAfterReport {
		// The failpoint: the leader dies after applying the report and before answering it.
		leader.crashAfterReport = false
		s.tracef(nil, leader.name, "failpoint: crashes after applying entry %d (%T, with a report), before answering", e.index, e.cmd)
		leader.crash()
		if e.wake != nil {
			w := e.wake
			e.wake = nil
			s.resume(w, outcome{err: errDead})
		}
		return
	}
	if e.wake != nil {
		w := e.wake
		e.wake = nil
		o := outcome{res: res}
		if err, ok := res.(error); ok {
			o = outcome{err: err}
		}
		s.resume(w, o)
	}
}

// appliesReport says whether cmd applies an edge's report: a Report, or an Acquire carrying some.
func appliesReport(cmd ledger.Command) bool {
	switch c := cmd.(type) {
	case *ledger.Report:
		return true
	case *ledger.Acquire:
		return len(c.Reports) > 0
	}
	return false
}

// failPending fails every proposal of m still waiting for its commit.
func (m *member) failPending(err error) {
	pending := m.pending
	m.pending = nil
	for _, e := range pending {
		if e.wake != nil {
			w := e.wake
			e.wake = nil
			m.s.resume(w, outcome{err: err})
		}
	}
}

// replicate gives e, just committed, to the members that acknowledged it: those it reached, and
// as many more voters the leader reaches as a majority of the voters needs.
func (s *Sim) replicate(e *entry, leader *member) {
	held := 0
	for _, o := range s.members {
		if e.replicated[o.id] && o.alive {
			o.logLen = max(o.logLen, e.index)
			if o.voter {
				held++
			}
		}
	}
	if leader == nil {
		return
	}
	for _, o := range s.members {
		if held*2 > s.voters() {
			return
		}
		if o.voter && o.alive && !e.replicated[o.id] && s.connected(leader, o) {
			e.replicated[o.id] = true
			o.logLen = max(o.logLen, e.index)
			held++
		}
	}
}

// checkHeld fails the run when committed entry e is held by no majority of the voters: the
// model itself broke raft's commit rule, and any loss that follows would be blamed on the code.
func (s *Sim) checkHeld(e *entry) {
	held := 0
	for _, o := range s.members {
		if o.voter && o.logLen >= e.index {
			held++
		}
	}
	if held*2 <= s.voters() {
		s.fail(fmt.Errorf("the model committed entry %d while %d of %d voters hold it", e.index, held, s.voters()))
	}
}

// truncate makes leader n's log the cluster's: the committed entries after it are lost (a
// recover, or an election the vote rule should have refused), and every member's log is
// rewritten to it. A member that applied a lost entry keeps it in its ledger, as raft cannot
// unapply it: the digest invariant sees that divergence.
func (s *Sim) truncate(n *member) {
	r := &s.raft
	cut := n.logLen
	lost := uint64(len(r.log)) - cut
	s.stats.Lost += int(lost)
	why := "an election the vote rule should have refused"
	if r.recovering {
		why = "the recover of " + n.name
		r.lostTo = cut
	}
	s.tracef(nil, n.name, "elected with a log of %d entries: entries %d..%d, committed, are lost (%s)", cut, cut+1, len(r.log), why)
	lostEntries := r.log[cut:]
	r.log = r.log[:cut]
	for _, m := range s.members {
		m.logLen = min(m.logLen, cut)
	}
	s.check.truncated(cut, lostEntries, r.recovering)
}
