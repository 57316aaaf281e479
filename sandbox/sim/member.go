// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/hashicorp/raft"
	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/edgecalls"
	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/coordinator/lessor"
	"github.com/seed96588659/muster/pkg/api"
)

type role int

const (
	roleFollower role = iota
	roleLeader
)

// member is one coordinator process: the real ledger FSM on its own bbolt file, the real lease
// manager and the coordinator's own rules for the edges' calls (edgecalls), with
// coordinator.Service's leadership steps (leader.go); the simulated Raft replaces
// hashicorp/raft.
type member struct {
	s     *Sim
	id    int // index in Sim.members and network address
	name  string
	clock *clock
	cfg   lessor.Config
	path  string

	alive  bool
	inc    int // incarnation: bumped by a crash, so the dead process's tasks are ignored
	ledger *ledger.Ledger
	mgr    *lessor.Manager
	// calls answers the edges by the coordinator's rules (coordinator/edgecalls).
	calls *edgecalls.Calls

	role  role
	term  uint64
	ready bool
	// applied is the last log index this member's ledger applied.
	applied uint64
	// logLen is the last index of the committed log this member's raft log holds (raft.go).
	logLen uint64
	// voter and learner place the member in the configuration; neither: removed from it.
	voter, learner bool
	// fresh is a member started without raft state (a lost disk, a join), until the leader
	// promoted it to a voter.
	fresh bool
	// announce is the cluster protocol this member's build applies (protocol.go); raising is
	// set while its proposal to raise the cluster protocol waits.
	announce        int
	raising         bool
	pending         []*entry
	stepDownPlanned bool
	commitRetry     bool
	catchUpPlanned  bool
	// anchor is this leadership's time as its promotion's extend stamped it: every later stamp of
	// the leadership must be anchor plus the monotonic time since (the stamp invariant).
	anchor *anchor
	// lastStamp is the ledger's LastStamp after the previous apply: it must never decrease.
	lastStamp time.Time
	// crashAfterReport arms the failpoint that kills this member after it applied a report as
	// leader, before the answer leaves.
	crashAfterReport bool
	// restartIn is how long after a crash the process comes back.
	restartIn time.Duration
	// wallSteps allows the wall clock fault on this member; off in the quiet end.
	wallSteps bool
	// slow is the chance that a request waits a while (a GC pause, a slow disk) between the
	// leader check and its stamp.
	slow float64
}

type anchor struct {
	wall time.Time
	mono int64
}

func (m *member) open() error {
	l, err := ledger.Open(m.path, ledger.Options{NoSync: true, OnApply: func(a ledger.Applied) {
		if m.mgr != nil {
			m.mgr.Notify(a)
		}
	}})
	if err != nil {
		return fmt.Errorf("member %s: %w", m.name, err)
	}
	m.ledger = l
	inc := m.inc
	mgr, err := lessor.New(m.cfg, l, func(ctx context.Context, cmd ledger.Command) (any, error) { return m.proposeFor(ctx, inc, cmd) }, m.clock, nil, nil)
	if err != nil {
		l.Close()
		return fmt.Errorf("member %s: %w", m.name, err)
	}
	m.mgr = mgr
	m.calls = edgecalls.New(callee{m: m, inc: inc}, edgecalls.Options{Errors: coordinator.HTTPErrors(), Approval: m.s.appr.policy(m.id)})
	idx, _, err := l.AppliedIndex()
	if err != nil {
		return fmt.Errorf("member %s: %w", m.name, err)
	}
	m.applied = idx
	m.lastStamp, err = l.LastStamp()
	if err != nil {
		return fmt.Errorf("member %s: %w", m.name, err)
	}
	m.alive = true
	return nil
}

func newMember(s *Sim, id int, cfg lessor.Config, skew time.Duration) *member {
	name := fmt.Sprintf("m%d", id)
	return &member{s: s, id: id, name: name, clock: newClock(s, 1000, skew), cfg: cfg, path: filepath.Join(s.dir, name+".db"), wallSteps: true, voter: true, announce: ledger.Protocol}
}

// shutdown stops the manager and closes the ledger file.
func (m *member) shutdown() {
	if m.mgr != nil {
		m.mgr.Disable()
		m.mgr = nil
	}
	if m.ledger != nil {
		if err := m.ledger.Close(); err != nil {
			m.s.fail(err)
		}
		m.ledger = nil
	}
}

// crash kills the process: its leadership, waiting requests and open file go with it; the file
// itself stays (a process crash loses no written page).
func (m *member) crash() {
	if !m.alive {
		return
	}
	s := m.s
	s.stepDown(m, "its process crashed")
	m.alive = false
	m.inc++
	m.failPending(errDead)
	m.shutdown()
	s.tracef(nil, m.name, "crashed; restarts in %s", m.restartIn)
	s.raft.changed(s)
	inc := m.inc
	s.after(m.restartIn, func() {
		if !m.alive && m.inc == inc {
			m.restart()
		}
	})
}

// restart starts the process again on its ledger file, a follower that catches up.
func (m *member) restart() {
	if m.alive {
		return
	}
	s := m.s
	m.role, m.ready = roleFollower, false
	if err := m.open(); err != nil {
		s.fail(err)
		return
	}
	s.tracef(nil, m.name, "restarted (ttl %s, protocol %d), ledger at index %d, raft log at %d, fresh %t", m.cfg.TTL, m.announce, m.applied, m.logLen, m.fresh)
	s.raft.changed(s)
}

// applyTo feeds the committed entries up to index to the ledger, one ApplyLogs call per entry
// as raft does on a leader that answers each; it returns the result of the last.
func (m *member) applyTo(index uint64) any {
	var res any
	for m.alive && m.applied < index {
		res = m.applyBatch(m.applied + 1)
	}
	return res
}

// catchUp applies everything committed up to index in batches, as raft's BatchingFSM hands a
// follower what it replicated; a batch ends at every 16th index, where the checker compares
// the members' digests.
func (m *member) catchUp(index uint64) {
	if !m.alive {
		return
	}
	m.logLen = max(m.logLen, index)
	if l := m.s.raft.leader; m.applied == 0 && l != nil && l != m && l.alive && l.applied > 0 && l.applied <= index {
		m.install(l)
	}
	for m.alive && m.applied < index {
		m.applyBatch(min(index, (m.applied/16+1)*16))
	}
}

// applyBatch applies entries applied+1..upto in one ApplyLogs call and returns the last result.
func (m *member) applyBatch(upto uint64) any {
	log := m.s.raft.log[m.applied:upto]
	batch := make([]*raft.Log, len(log))
	for i, e := range log {
		batch[i] = &raft.Log{Index: e.index, Term: e.term, Type: raft.LogCommand, Data: e.data}
	}
	res := m.ledger.ApplyLogs(batch)
	m.applied = upto
	m.s.check.applied(m, log, res)
	return res[len(res)-1]
}

// catchUpSoon applies, after a replication delay, what was committed, if the leader is heard.
func (m *member) catchUpSoon() {
	if m.catchUpPlanned || !m.alive {
		return
	}
	m.catchUpPlanned = true
	s := m.s
	// Followers lag by up to 15 s: nothing but their own promotion (which catches up first)
	// reads their ledgers, and batching their applies keeps a seed cheap.
	s.after(s.between(time.Millisecond, 15*time.Second), func() {
		m.catchUpPlanned = false
		if l := s.raft.leader; l != nil && s.connected(m, l) && m.inConfig() {
			m.catchUp(uint64(len(s.raft.log)))
		}
	})
}

// establish is leader.go's establishLeadership: Barrier (apply everything committed), raise the
// cluster protocol, Enable the lease manager (its extend must commit); then ready.
func (m *member) establish(term uint64) {
	s := m.s
	if !m.alive || m.role != roleLeader || m.term != term {
		return
	}
	m.catchUp(uint64(len(s.raft.log)))
	inc, mgr := m.inc, m.mgr
	s.task(func() {
		// The members' answers are read before the lease manager is enabled (the real leader
		// asks them once ready: raiseProtocol raises it later too), so a seed runs the protocol
		// its members announce from its first leader on.
		p, err := m.ledger.ClusterProtocol()
		if v := s.lowestAnnounced(m); err == nil && p < v {
			_, err = m.propose(inc, &ledger.SetProtocol{Version: v})
		}
		if err == nil {
			err = mgr.Enable(context.Background())
		}
		if m.inc != inc || m.role != roleLeader || m.term != term {
			return
		}
		if err != nil {
			s.tracef(nil, m.name, "establishing leadership of term %d failed: %v", term, err)
			s.after(100*time.Millisecond, func() { m.establish(term) })
			return
		}
		m.ready = true
		s.tracef(nil, m.name, "leadership of term %d established (ttl %s)", term, m.cfg.TTL)
	})
}

// checkStamp says why cmd's stamp, proposed by m now, is not m's anchored ledger time ("" when
// it is). The promotion's extend sets the anchor. An Acquire has no stamp of its own: each of its
// parts carries the stamp the command of its own would have.
func (m *member) checkStamp(cmd ledger.Command, since int64) string {
	if a, ok := cmd.(*ledger.Acquire); ok {
		return m.checkPartStamps(a)
	}
	at := ledger.StampOf(cmd)
	if at.IsZero() {
		return ""
	}
	if _, ok := cmd.(*ledger.Extend); ok {
		m.anchor = &anchor{wall: at, mono: m.clock.mono(m.s.now)}
		last, err := m.ledger.LastStamp()
		if err == nil && at.Before(last) {
			return fmt.Sprintf("promotion anchored ledger time at %s, before the ledger's latest stamp %s", fmtStamp(at), fmtStamp(last))
		}
		return ""
	}
	if m.anchor == nil {
		return fmt.Sprintf("%T stamped %s by %s, whose leadership has no anchored ledger time (wall clock %s)", cmd, fmtStamp(at), m.name, fmtStamp(m.clock.Now()))
	}
	want := m.ledgerTime(m.s.now)
	if _, ok := cmd.(*ledger.Grant); ok && since > 0 && m.carriesApart() && !at.Before(m.ledgerTime(since)) && !at.After(want) {
		// Below AcquireProtocol the lease manager proposes an acquire's reports alone, after
		// it stamped their grant: the stamp was taken while the request was served.
		return ""
	}
	if !at.Equal(want) {
		return fmt.Sprintf("%T stamped %s by %s, whose ledger time is %s (off by %s)", cmd, fmtStamp(at), m.name, fmtStamp(want), at.Sub(want))
	}
	return ""
}

// ledgerTime is this leadership's anchored ledger time at real time t.
func (m *member) ledgerTime(t int64) time.Time {
	return m.anchor.wall.Add(time.Duration(m.clock.mono(t) - m.anchor.mono))
}

// carriesApart says whether the cluster protocol has the lease manager propose an acquire's
// reports in entries of their own (lessor.carry), before their grant.
func (m *member) carriesApart() bool {
	p, err := m.ledger.ClusterProtocol()
	return err == nil && p < ledger.AcquireProtocol
}

// servedAt is the context key of the real time a request began to be served: a stamp the lease
// manager took for it is not older.
type servedAt struct{}

// proposeFor is propose for the lease manager, whose ctx says when its request began.
func (m *member) proposeFor(ctx context.Context, inc int, cmd ledger.Command) (any, error) {
	since, _ := ctx.Value(servedAt{}).(int64)
	return m.proposeSince(inc, cmd, since)
}

// checkPartStamps is checkStamp of each part of a, in order: the first that is not m's anchored
// ledger time.
func (m *member) checkPartStamps(a *ledger.Acquire) string {
	for i := range a.Reports {
		if why := m.checkStamp(&a.Reports[i], 0); why != "" {
			return why
		}
	}
	if a.Grant != nil {
		return m.checkStamp(a.Grant, 0)
	}
	return ""
}

// stamp is the ledger time the service stamps into a command it proposes itself: Manager.Stamp,
// which refuses without an established leadership, or on a build before it, Manager.Now, which
// fell back to the wall clock. A type switch keeps this compiling on both, so the simulator can
// replay a seed on an older tree.
func (m *member) stamp() (time.Time, error) {
	switch mgr := any(m.mgr).(type) {
	case interface{ Stamp() (time.Time, error) }:
		t, err := mgr.Stamp()
		if err != nil {
			return t, m.mapLeaseErr(err)
		}
		return t, nil
	case interface{ Now() time.Time }:
		return mgr.Now(), nil
	}
	return time.Time{}, errors.New("lessor.Manager has neither Stamp nor Now")
}

var (
	errNotLeader = errors.New("not the leader")
	errNoLeader  = errors.New("no leader")
	errNotReady  = errors.New("leadership not established")
)

// leaderOnly is Service.leaderOnly: leader and ready, else why not.
func (m *member) leaderOnly() error {
	switch {
	case !m.alive:
		return errDead
	case m.role != roleLeader:
		if m.leaderHint() < 0 {
			return errNoLeader
		}
		return errNotLeader
	case !m.ready:
		return errNotReady
	}
	return nil
}

// mapLeaseErr is Service.mapLeaseErr.
func (m *member) mapLeaseErr(err error) error {
	if errors.Is(err, lessor.ErrDisabled) {
		if lerr := m.leaderOnly(); lerr != nil {
			return lerr
		}
		return errNotReady
	}
	return err
}

// confirm is VerifyLeader: a quorum still follows this member in its term.
func (m *member) confirm() bool {
	r := &m.s.raft
	return m.alive && m.role == roleLeader && r.leader == m && m.term == r.term && r.quorum(m.s, m)
}

// leaderHint is the leader this member knows of (-1 for none): the current one if it hears it.
func (m *member) leaderHint() int {
	if l := m.s.raft.leader; l != nil && l != m && m.s.connected(m, l) {
		return l.id
	}
	return -1
}

// receive handles one request: the leader check now, the rest (after a possible delay) as a
// task, since the manager proposes and waits for the commit.
func (m *member) receive(msg *message) {
	if !m.alive {
		return
	}
	if err := m.leaderOnly(); err != nil {
		m.answer(msg, nil, err)
		return
	}
	s := m.s
	inc := m.inc
	run := func() {
		if !m.alive || m.inc != inc {
			return
		}
		s.task(func() {
			resp, err := m.serve(msg)
			m.answer(msg, resp, err)
		})
	}
	if msg.kind == kindHeartbeat {
		resp, err := m.serve(msg)
		m.answer(msg, resp, err)
		return
	}
	if s.chance(m.slow) {
		d := s.between(50*time.Millisecond, 3*time.Second)
		s.tracef([]string{m.name, s.procName(msg.from)}, m.name, "holds %s's %s request %s between its leader check and the rest (a GC pause, a slow disk)", s.procName(msg.from), msg.kind, d)
		s.after(d, run)
		return
	}
	run()
}

// serve answers one request: the edge's calls by the coordinator's own rules (edgecalls), the
// operator's as the service's admin calls do.
func (m *member) serve(msg *message) (any, error) {
	ctx := context.WithValue(context.Background(), servedAt{}, m.s.now)
	switch req := msg.req.(type) {
	case api.AcquireRequest:
		// The HTTP layer refuses an invalid request before the service sees it; the simulated
		// edges must never send one.
		if err := req.Validate(); err != nil {
			m.s.fail(fmt.Errorf("%s sent an acquire the API refuses: %w", req.Edge, err))
			return nil, fmt.Errorf("%w: %w", coordinator.ErrBadRequest, err)
		}
		return m.calls.Acquire(ctx, req)
	case api.RenewRequest:
		return m.calls.Renew(ctx, req)
	case api.ReportRequest:
		return m.calls.Report(ctx, req)
	case api.RegisterRequest:
		return m.calls.Register(ctx, req)
	case api.HeartbeatRequest:
		return m.calls.Heartbeat(ctx, req)
	case operatorRequest:
		return m.operate(req)
	case pauseRequest:
		now, err := m.stamp()
		if err != nil {
			return nil, err
		}
		res, err := m.propose(m.inc, &ledger.Pause{Now: now, Paused: req.paused, By: "operator"})
		if err != nil {
			return nil, err
		}
		return res.(*ledger.PauseState).Paused, nil
	}
	return nil, fmt.Errorf("member %s: unknown request %T", m.name, msg.req)
}

// operate is the service's Operate for one node.
func (m *member) operate(req operatorRequest) (any, error) {
	now, err := m.stamp()
	if err != nil {
		return nil, err
	}
	nodes := []string{req.node}
	if req.all {
		if nodes, err = m.approveAll(req.region); err != nil || len(nodes) == 0 {
			return nil, err
		}
	}
	res, err := m.propose(m.inc, &ledger.Operator{Now: now, By: "sim", Verb: req.verb, Nodes: nodes, Region: req.region, Policy: m.mgr.Config().Policy})
	if err != nil {
		return nil, err
	}
	return res.(*ledger.OperatorResult).Done, nil
}

// pauseRequest is the operator's pause (paused) or resume.
type pauseRequest struct{ paused bool }

// answer sends the reply of msg, if this process still lives to send it.
func (m *member) answer(msg *message, resp any, err error) {
	if !m.alive {
		return
	}
	rep := &message{from: m.id, to: msg.from, toInc: msg.fromInc, kind: msg.kind, call: msg.call, attempt: msg.attempt, reply: true, resp: resp, seen: logPos{recovers: m.s.stats.Recovers, index: m.applied}}
	if err != nil {
		rep.err = m.apiError(err)
	}
	m.s.net.send(rep)
}

// apiError is what the HTTP layer makes of a service error: the simulated member's own
// unavailability first, then the coordinator's table (coordinator.HTTPErrors), so an edge in the
// simulation reads every ledger refusal exactly as it would from a member.
func (m *member) apiError(err error) *api.Error {
	e := &api.Error{Message: err.Error(), Member: m.name}
	switch {
	case errors.Is(err, errNotLeader):
		e.Status, e.Code = 421, api.CodeNotLeader
		if h := m.leaderHint(); h >= 0 {
			e.Leader = m.s.members[h].name
		}
		return e
	case errors.Is(err, errNoLeader):
		e.Status, e.Code = 503, api.CodeNoLeader
		return e
	case errors.Is(err, errNotReady), errors.Is(err, errDead), errors.Is(err, lessor.ErrDisabled),
		errors.Is(err, raft.ErrLeadershipLost), errors.Is(err, raft.ErrNotLeader), errors.Is(err, errClosed):
		e.Status, e.Code = 503, api.CodeUnavailable
		return e
	}
	for _, mp := range coordinator.HTTPErrors() {
		if errors.Is(err, mp.Err) {
			e.Status, e.Code = mp.Status, mp.Code
			return e
		}
	}
	e.Status, e.Code = 500, api.CodeInternal
	return e
}

// expireTick is the leader's expiry loop, driven by the simulation: every member that believes
// it leads and is ready proposes the expiry of its due leases.
func (s *Sim) expireTick() {
	s.admit()
	for _, m := range s.members {
		m.raiseProtocol()
		if m.alive && m.role == roleLeader && m.ready {
			mgr := m.mgr
			s.task(func() {
				if err := mgr.ExpireDue(context.Background()); err != nil && !errors.Is(err, lessor.ErrDisabled) {
					s.tracef(nil, m.name, "expire: %v", err)
				}
			})
		}
	}
	s.after(time.Second, s.expireTick)
}

// procName is the name of the process at network address id.
func (s *Sim) procName(id int) string {
	switch {
	case id < len(s.members):
		return s.members[id].name
	case id < len(s.members)+len(s.edges):
		return s.edges[id-len(s.members)].name
	}
	return s.op.name
}
