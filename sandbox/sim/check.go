// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/pkg/api"
)

// The checker's invariants (DESIGN.md lists them with their reasons):
const (
	// InvOverlap: for every node, the real-time intervals in which edges may act on it under
	// different leases never overlap; every act lies in its edge's interval.
	InvOverlap = "overlap"
	// InvLockWindow: the ledger never offers a node to an edge while another edge holds the
	// node's provisioning lock (its last call plus lock_window), in real time.
	InvLockWindow = "lock-window"
	// InvIdempotent: a report retried within ReportMemory (real time) is answered with the
	// first try's outcomes and changes nothing.
	InvIdempotent = "idempotent-report"
	// InvResultLost: a result answered as applied is recorded, and stays in the node's history.
	InvResultLost = "result-lost"
	// InvStamp: every stamp is its leader's anchored ledger time, which never runs backwards.
	InvStamp = "stamp"
	// InvDigest: members that applied the same log have the same Digest.
	InvDigest = "digest"
	// InvPause: no grant while paused, and no act by an edge after it got an answer made after
	// the pause committed.
	InvPause = "pause"
	// InvBanned: no node is granted while the operator's ban of it stands.
	InvBanned = "banned"
	// InvHeld: no node is granted while it is held: from a hold the ledger answered (a
	// registration under an approval policy), or a second responder's result applied at cluster
	// protocol 8 or later, until the operator's approve (or forget).
	InvHeld = "held"
	// InvApproveLock: an approve never lets the ledger offer a node to an edge while another
	// edge holds its provisioning lock (the lock-window invariant, for a node approved inside it).
	InvApproveLock = "approve-lock"
	// InvStuck (liveness): at the end of the quiet time, no node that has been in provisioning
	// mode for stuckAfter of it is recorded as finished (provisioned, shutdown, gone): a sweep
	// must have registered it again, so it is offered again.
	InvStuck = "stuck"
)

// stuckAfter is how long of the quiet time a node in provisioning mode may stay recorded as
// finished: a sweep (every 30 s at most) registers it, reprovision_after (30 s at most) and the
// fence of a live lease (a TTL of 60 s at most, plus grace) let its registration requeue it.
const stuckAfter = 2*time.Minute + 30*time.Second

// Violation is an invariant a run broke.
type Violation struct {
	Invariant string
	At        int64
	Detail    string
	// Subjects are the nodes, leases and edges it concerns: the trace is focused on them.
	Subjects []string
}

func (v *Violation) Error() string {
	return fmt.Sprintf("%s violated at %s: %s", v.Invariant, fmtTime(v.At), v.Detail)
}

// secondFence is how long a run goes on after a lock-window violation, whose cause may also
// break the lease fence itself: the overlap, if it follows, is the finding to show.
const secondFence = 30 * time.Second

type checker struct {
	s         *Sim
	violation *Violation
	// soft is a lock-window violation waiting out secondFence.
	soft *Violation
	// found is, with KeepGoing, the first violation of each invariant.
	found     []*Violation
	intervals map[string][]*interval
	reports   map[string]*firstReport
	acks      []ack
	pauses    []pauseChange
	digests   map[uint64][]byte
	// banned holds the nodes an operator's committed ban keeps out, by the ban's log index;
	// forgotten the log index of each node's last forget.
	banned    map[string]uint64
	forgotten map[string]uint64
	// held holds the nodes a committed hold keeps out, by the hold's log index, until an approve
	// or a forget; approvedAt is the real time of each node's last approve. protocol is the
	// cluster protocol the entries observed so far raised the ledger to.
	held       map[string]uint64
	approvedAt map[string]int64
	protocol   int
	// operated holds the nodes the operator acted on: a forgotten node is left out of the
	// edges' sweeps for register.DefaultResend, a banned or moved one may never be offered again.
	operated map[string]bool
	// unsure holds the nodes a recover lost a registration of: the edges remember its answer.
	unsure map[string]bool
	// quietAt is when the faults ended (real time).
	quietAt int64
}

// interval is the time in which an edge may act on a node under one lease: from the grant's
// receipt while the edge's count (Held) runs and holds the node, until its host ended or the
// process died. A renewal that arrives after the count ran out may start it again.
type interval struct {
	ho    *host
	e     *edge
	inc   int
	node  string
	start int64
	end   int64 // non-zero once the host ended or the edge died
}

type firstReport struct {
	at      int64
	index   uint64
	applied []string
}

type ack struct {
	node, lease string
	token       uint64
	outcome     api.Outcome
	index       uint64
}

type pauseChange struct {
	at     int64
	pos    logPos
	paused bool
	// restart is the flag a recover leaves in force after it cut off pause changes: it holds
	// anew from the recover, as no edge could know it before the new history answered.
	restart bool
}

func newChecker(s *Sim) *checker {
	return &checker{s: s, intervals: map[string][]*interval{}, reports: map[string]*firstReport{}, digests: map[uint64][]byte{}, banned: map[string]uint64{}, forgotten: map[string]uint64{}, operated: map[string]bool{}, unsure: map[string]bool{},
		held: map[string]uint64{}, approvedAt: map[string]int64{}, protocol: 1}
}

func (c *checker) fail(inv string, subjects []string, format string, args ...any) {
	if c.s.opts.KeepGoing && slices.ContainsFunc(c.found, func(f *Violation) bool { return f.Invariant == inv }) {
		return
	}
	v := &Violation{Invariant: inv, At: c.s.now, Detail: fmt.Sprintf(format, args...), Subjects: subjects}
	c.s.tracef(subjects, "CHECK", "VIOLATION %s: %s", inv, v.Detail)
	if c.s.opts.KeepGoing {
		c.found = append(c.found, v)
		return
	}
	if inv == InvLockWindow {
		if c.soft == nil {
			c.soft = v
		}
		return
	}
	if c.violation == nil {
		c.violation = v
	}
}

// due promotes a lock-window violation once secondFence has passed without a worse one.
func (c *checker) due() {
	if c.soft != nil && c.violation == nil && c.s.now >= c.soft.At+int64(secondFence) {
		c.violation = c.soft
	}
}

func (iv *interval) active(t int64) bool {
	e := iv.e
	if iv.end != 0 || !e.alive || e.inc != iv.inc {
		return false
	}
	h := iv.ho.hl.h
	if !holds(h, iv.node) {
		return false
	}
	d := h.Deadline()
	return d.IsZero() || e.clock.mono(t) < d.UnixNano()
}

func (iv *interval) String() string {
	l := iv.ho.hl.l
	return fmt.Sprintf("%s under lease %s (received %s, counted until %s, host %s)", iv.e.who(), leaseName(l.ID, l.Token),
		fmtTime(iv.start), iv.e.fmtDeadline(iv.ho.hl.h), map[bool]string{false: "running", true: "ended"}[iv.ho.done])
}

// opened starts ho's interval at the grant's receipt.
func (c *checker) opened(ho *host) {
	iv := &interval{ho: ho, e: ho.hl.e, inc: ho.hl.e.inc, node: ho.node, start: c.s.now}
	ho.iv = iv
	live := c.intervals[ho.node][:0]
	for _, o := range c.intervals[ho.node] {
		if o.end == 0 {
			live = append(live, o)
		}
	}
	c.intervals[ho.node] = append(live, iv)
	c.overlap(iv)
}

// overlap checks iv, which may act now, against every other lease's interval on its node.
func (c *checker) overlap(iv *interval) {
	now := c.s.now
	if !iv.active(now) {
		return
	}
	l := iv.ho.hl.l
	for _, o := range c.intervals[iv.node] {
		ol := o.ho.hl.l
		if o == iv || ol.ID == l.ID && ol.Token == l.Token && o.inc == iv.inc && o.e == iv.e {
			continue
		}
		if o.active(now) {
			c.fail(InvOverlap, []string{iv.node, l.ID, ol.ID, iv.e.name, o.e.name},
				"node %s: %s may act on it while %s still may", iv.node, iv, o)
			return
		}
	}
}

// renewed re-checks a renewed lease's intervals: a node the answer left out is no longer held;
// a count that had run out may run again.
func (c *checker) renewed(hl *heldLease) {
	for _, ho := range hl.hosts {
		if ho.done || ho.iv.end != 0 {
			continue
		}
		if !holds(hl.h, ho.node) {
			ho.iv.end = c.s.now
			c.s.tracef([]string{ho.node, hl.l.ID}, hl.e.who(), "no longer holds %s under %s", ho.node, leaseName(hl.l.ID, hl.l.Token))
			continue
		}
		c.overlap(ho.iv)
	}
}

func (c *checker) hostEnded(ho *host) {
	if ho.iv.end == 0 {
		ho.iv.end = c.s.now
	}
}

func (c *checker) killed(e *edge) {
	for _, hl := range e.leases {
		for _, ho := range hl.hosts {
			c.hostEnded(ho)
		}
	}
}

// act is one call of e's host on its node.
func (c *checker) act(e *edge, ho *host) {
	s := c.s
	s.stats.Acts++
	l := ho.hl.l
	s.tracef([]string{ho.node, l.ID, e.name}, e.who(), "acts on %s under %s (call %d of %d)", ho.node, leaseName(l.ID, l.Token), ho.acts+1, ho.steps)
	if !ho.iv.active(s.now) {
		c.fail(InvOverlap, []string{ho.node, l.ID, e.name}, "node %s: %s acted outside its interval", ho.node, ho.iv)
	}
	if p := c.pausedAt(s.now); p.paused && e.lastAnswer.atOrAfter(p.pos) {
		c.fail(InvPause, []string{ho.node, l.ID, e.name}, "node %s: %s acted under %s while paused since %s (entry %d), after an answer made at log index %d (after %d recovers)",
			ho.node, e.who(), leaseName(l.ID, l.Token), fmtTime(p.at), p.pos.index, e.lastAnswer.index, e.lastAnswer.recovers)
	}
}

// pausedAt is the committed pause flag at t and the change that set it.
func (c *checker) pausedAt(t int64) pauseChange {
	var cur pauseChange
	for _, p := range c.pauses {
		if p.at > t {
			break
		}
		if p.paused != cur.paused || p.restart {
			cur = p
		}
	}
	return cur
}

// acked notes the results an edge was told were applied, in an answer made at seen.
func (c *checker) acked(e *edge, req api.ReportRequest, resp api.ReportResponse, seen logPos) {
	f := c.reports[req.LeaseID+"\x00"+req.RequestID]
	for _, id := range resp.Applied {
		if f == nil || !slices.Contains(f.applied, id) {
			if seen.recovers < c.s.stats.Recovers {
				// Made before the last recover, which lost the entry that applied it, as
				// docs/cluster.md warns (truncated forgot it): nothing to hold the cluster to.
				continue
			}
			c.fail(InvResultLost, []string{id, req.LeaseID, e.name}, "%s was told report %s applied %s, which no committed entry applied", e.who(), req.RequestID, id)
			return
		}
		for _, r := range req.Results {
			if r.Identity == id {
				c.acks = append(c.acks, ack{node: id, lease: req.LeaseID, token: req.Token, outcome: r.Outcome, index: f.index})
			}
		}
	}
}

// applied checks member m after it applied entries (with results res) in one batch.
func (c *checker) applied(m *member, entries []*entry, res []any) {
	st, err := m.ledger.LastStamp()
	if err != nil {
		c.s.fail(err)
		return
	}
	last := entries[len(entries)-1].index
	if st.Before(m.lastStamp) {
		c.fail(InvStamp, []string{m.name}, "%s's LastStamp went back from %s to %s at entry %d", m.name, fmtStamp(m.lastStamp), fmtStamp(st), last)
	}
	m.lastStamp = st
	if last%16 == 0 {
		c.digest(m, last)
	}
	for i, e := range entries {
		if !e.observed {
			e.observed = true
			c.observe(m, e, res[i])
		}
	}
}

func (c *checker) digest(m *member, index uint64) {
	d, err := m.ledger.Digest()
	if err != nil {
		c.s.fail(err)
		return
	}
	if prev, ok := c.digests[index]; !ok {
		c.digests[index] = d
	} else if !bytes.Equal(prev, d) {
		c.fail(InvDigest, nil, "%s's ledger digest at index %d differs from another member's at the same index", m.name, index)
	}
}

// observe checks an entry's result the first time any member applies it (every member's
// result is the same: the digest invariant).
func (c *checker) observe(m *member, e *entry, res any) {
	s := c.s
	if e.stampErr != "" {
		c.fail(InvStamp, []string{e.by.name}, "entry %d: %s", e.index, e.stampErr)
	}
	switch cmd := e.cmd.(type) {
	case *ledger.Report:
		c.observeReport(m, e, cmd, res)
	case *ledger.Grant:
		c.observeGrant(m, e, res)
	case *ledger.Acquire:
		c.observeAcquire(m, e, cmd, res)
	case *ledger.Operator:
		r, ok := res.(*ledger.OperatorResult)
		if !ok {
			return
		}
		for _, id := range r.Done {
			switch cmd.Verb {
			case ledger.VerbBan:
				c.banned[id] = e.index
			case ledger.VerbUnban:
				delete(c.banned, id)
			case ledger.VerbForget:
				delete(c.banned, id)
				delete(c.held, id)
				c.forgotten[id] = e.index
			case ledger.VerbApprove:
				delete(c.held, id)
				c.approvedAt[id] = s.now
				s.stats.Approvals++
			}
		}
		for _, rj := range r.Rejected {
			s.tracef([]string{rj.Identity}, m.name, "entry %d: %s %s refused: %s", e.index, cmd.Verb, rj.Identity, rj.Reason)
		}
		if len(r.Done) > 0 {
			s.tracef(r.Done, m.name, "entry %d: %s %v %s", e.index, cmd.Verb, r.Done, cmd.Region)
		}
	case *ledger.Pause:
		if p, ok := res.(*ledger.PauseState); ok {
			c.pauses = append(c.pauses, pauseChange{at: s.now, pos: logPos{recovers: s.stats.Recovers, index: e.index}, paused: p.Paused})
			s.tracef(nil, m.name, "entry %d: pause=%t committed", e.index, p.Paused)
		}
	case *ledger.Expire:
		if r, ok := res.(*ledger.ExpireResult); ok && len(r.Expired) > 0 {
			s.tracef(r.Expired, m.name, "entry %d expires %v at ledger time %s", e.index, leaseNames(r.Expired), fmtStamp(cmd.Now))
		}
	case *ledger.Extend:
		s.tracef(nil, m.name, "entry %d extends every lease to at least %s from %s", e.index, cmd.AtLeast, fmtStamp(cmd.Now))
	case *ledger.Register:
		if r, ok := res.(*ledger.RegisterResult); ok && r.Requeued > 0 {
			s.tracef(nil, m.name, "entry %d (register from %s) requeues %d nodes", e.index, cmd.Edge, r.Requeued)
		}
		if r, ok := res.(*ledger.RegisterResult); ok && len(r.Held) > 0 {
			s.tracef(r.Held, m.name, "entry %d (register from %s) holds %v", e.index, cmd.Edge, r.Held)
			for _, id := range r.Held {
				c.held[id] = e.index
			}
			s.stats.Holds += len(r.Held)
		}
	case *ledger.SetProtocol:
		if _, ok := res.(*ledger.ProtocolResult); ok {
			c.protocol = max(c.protocol, cmd.Version)
		}
	}
}

// observeGrant checks a grant's result: a Grant entry's, or an Acquire entry's grant.
func (c *checker) observeGrant(m *member, e *entry, res any) {
	s := c.s
	g, ok := res.(*ledger.GrantResult)
	if !ok || g.Lease == nil {
		return
	}
	if g.Replayed {
		s.tracef([]string{g.Lease.ID, g.Lease.Edge}, m.name, "entry %d answers a retried acquire with lease %s again: %v, expires %s",
			e.index, leaseName(g.Lease.ID, g.Lease.Token), g.Lease.Nodes, fmtStamp(g.Lease.ExpiresAt))
		return
	}
	tags := append([]string{g.Lease.ID, g.Lease.Edge}, g.Lease.Nodes...)
	s.tracef(tags, m.name, "entry %d grants lease %s to %s: %v, expires %s", e.index, leaseName(g.Lease.ID, g.Lease.Token), g.Lease.Edge, g.Lease.Nodes, fmtStamp(g.Lease.ExpiresAt))
	if p := c.pausedAt(s.now); p.paused {
		c.fail(InvPause, tags, "entry %d granted lease %s while paused since %s (entry %d)", e.index, leaseName(g.Lease.ID, g.Lease.Token), fmtTime(p.at), p.pos.index)
	}
	for _, id := range g.Lease.Nodes {
		if at, ok := c.banned[id]; ok {
			c.fail(InvBanned, append(tags, id), "entry %d granted %s under lease %s, banned by entry %d", e.index, id, leaseName(g.Lease.ID, g.Lease.Token), at)
		}
		if at, ok := c.held[id]; ok {
			c.fail(InvHeld, append(tags, id), "entry %d granted %s under lease %s, held by entry %d and not approved since", e.index, id, leaseName(g.Lease.ID, g.Lease.Token), at)
		}
	}
	tol := int64(lockWindow)/500 + int64(100*time.Millisecond)
	for _, id := range g.Lease.Nodes {
		if n := s.node(id); n.lockEdge != "" && n.lockEdge != g.Lease.Edge && n.lockUntil-tol > s.now {
			if at, ok := c.approvedAt[id]; ok && at >= n.lockUntil-int64(lockWindow) {
				c.fail(InvApproveLock, []string{id, g.Lease.ID, n.lockEdge, g.Lease.Edge}, "entry %d offered %s to %s under lease %s, approved at %s inside the provisioning lock %s holds until %s",
					e.index, id, g.Lease.Edge, leaseName(g.Lease.ID, g.Lease.Token), fmtTime(at), n.lockEdge, fmtTime(n.lockUntil))
				continue
			}
			c.fail(InvLockWindow, []string{id, g.Lease.ID, n.lockEdge, g.Lease.Edge}, "entry %d offered %s to %s under lease %s while %s holds its provisioning lock until %s",
				e.index, id, g.Lease.Edge, leaseName(g.Lease.ID, g.Lease.Token), n.lockEdge, fmtTime(n.lockUntil))
		}
	}
}

// observeAcquire observes each part of an Acquire entry as the command of its own would be
// observed, in the order the ledger applied them: its reports, then its grant.
func (c *checker) observeAcquire(m *member, e *entry, cmd *ledger.Acquire, res any) {
	ar, ok := res.(*ledger.AcquireResult)
	for i := range cmd.Reports {
		part := res // an entry refused as a whole refuses each of its reports
		if ok {
			part = partAnswer(ar.ReportOf(i))
		}
		c.observeReport(m, e, &cmd.Reports[i], part)
	}
	if ok && cmd.Grant != nil {
		c.observeGrant(m, e, partAnswer(ar.GrantOf()))
	}
}

// partAnswer is an Acquire part's answer as the command of its own would have it: its result,
// or the error that refused it.
func partAnswer[T any](res *T, err error) any {
	if err != nil {
		return err
	}
	return res
}

func (c *checker) observeReport(m *member, e *entry, cmd *ledger.Report, res any) {
	s := c.s
	subjects := []string{cmd.LeaseID, cmd.Edge}
	for _, r := range cmd.Results {
		subjects = append(subjects, r.Identity)
	}
	rr, _ := res.(*ledger.ReportResult)
	switch {
	case rr != nil:
		s.tracef(subjects, m.name, "entry %d applies report %s of %s: applied %v, rejected %d, replayed %t", e.index, cmd.RequestID, leaseName(cmd.LeaseID, cmd.Token), rr.Applied, len(rr.Rejected), rr.Replayed)
	default:
		s.tracef(subjects, m.name, "entry %d refuses report %s of %s: %v", e.index, cmd.RequestID, leaseName(cmd.LeaseID, cmd.Token), res)
	}
	if rr != nil && !rr.Replayed {
		for _, id := range rr.Applied {
			c.recorded(m, id, cmd)
			c.heldByResult(e, id, cmd)
		}
	}
	if cmd.RequestID == "" {
		return
	}
	key := cmd.LeaseID + "\x00" + cmd.RequestID
	f := c.reports[key]
	memory := int64(s.world.reportMemory) - int64(s.world.reportMemory)/500 - int64(time.Second)
	within := f != nil && s.now-f.at < memory
	switch {
	case rr != nil && rr.Replayed:
		if f != nil && !slices.Equal(rr.Applied, f.applied) {
			c.fail(InvIdempotent, subjects, "entry %d answered the retry of report %s with applied %v, its first try (entry %d) applied %v", e.index, cmd.RequestID, rr.Applied, f.index, f.applied)
		}
	case within && rr != nil:
		c.fail(InvIdempotent, subjects, "entry %d applied report %s again (applied %v), %s after its first try (entry %d, applied %v): its answer was forgotten",
			e.index, cmd.RequestID, rr.Applied, time.Duration(s.now-f.at), f.index, f.applied)
	case within:
		c.fail(InvIdempotent, subjects, "entry %d refused the retry of report %s (%v), %s after its first try (entry %d) applied %v",
			e.index, cmd.RequestID, res, time.Duration(s.now-f.at), f.index, f.applied)
	case rr != nil:
		c.reports[key] = &firstReport{at: s.now, index: e.index, applied: slices.Clone(rr.Applied)}
	}
}

// heldByResult notes node id held when the applied result of cmd names a second responder at
// cluster protocol 8 or later: the world knows the node has a twin, whatever the wire said.
func (c *checker) heldByResult(e *entry, id string, cmd *ledger.Report) {
	if c.protocol < ledger.HeldProtocol {
		return
	}
	for _, r := range cmd.Results {
		if r.Identity == id && r.Outcome == api.OutcomeFailed && strings.Contains(r.Error, dupPhrase) {
			c.held[id] = e.index
			c.s.stats.Holds++
			c.s.tracef([]string{id, cmd.LeaseID}, "check", "entry %d: %s's second responder holds it", e.index, id)
		}
	}
}

// heldSet is the nodes held now, as the committed entries say.
func (c *checker) heldSet() map[string]uint64 { return c.held }

// recorded checks that a result the ledger says it applied is the node's state now.
func (c *checker) recorded(m *member, id string, cmd *ledger.Report) {
	var out api.Outcome
	for _, r := range cmd.Results {
		if r.Identity == id {
			out = r.Outcome
		}
	}
	n, err := m.ledger.Node(id)
	if err != nil {
		c.fail(InvResultLost, []string{id, cmd.LeaseID}, "report of %s applied %s, which the ledger then cannot read: %v", leaseName(cmd.LeaseID, cmd.Token), id, err)
		return
	}
	if h := n.History; len(h) > 0 && h[len(h)-1].From == api.StateLeased && strings.Contains(h[len(h)-1].Reason, "late report") {
		c.s.stats.LateTakeovers++
		c.s.tracef([]string{id, cmd.LeaseID}, m.name, "late result of %s takes %s out of a live lease", leaseName(cmd.LeaseID, cmd.Token), id)
	}
	if !hasResult(n, cmd.LeaseID, cmd.Token, out) {
		c.fail(InvResultLost, []string{id, cmd.LeaseID}, "report of %s applied %s %s, but the node is %s with no such transition", leaseName(cmd.LeaseID, cmd.Token), id, out, n.State)
	}
}

// hasResult says whether n's history records outcome out of lease id and token.
func hasResult(n *ledger.Node, id string, token uint64, out api.Outcome) bool {
	want := map[api.Outcome][]api.NodeState{
		api.OutcomeProvisioned: {api.StateProvisioned}, api.OutcomeShutdown: {api.StateShutdown},
		// A gone result after a stale sighting keeps the node's recorded result (ledger.staleRequeue).
		api.OutcomeDeferred: {api.StateDeferred}, api.OutcomeGone: {api.StateGone, api.StateProvisioned, api.StateShutdown}, api.OutcomeReleased: {api.StateWaiting},
		api.OutcomeFailed: {api.StateWaiting, api.StateAbandoned, api.StateHeld}, api.OutcomeUpgradeSent: {api.StateWaiting, api.StateAbandoned},
		api.OutcomeLockHeld: {api.StateWaiting, api.StateAbandoned},
	}[out]
	for _, tr := range n.History {
		if tr.LeaseID == id && tr.LeaseToken == token && slices.Contains(want, tr.To) {
			return true
		}
	}
	return false
}

// final runs at the end of a run: every member catches up, then all agree and keep every
// acknowledged result.
func (c *checker) final() {
	s := c.s
	n := uint64(len(s.raft.log))
	var first []byte
	for _, m := range s.members {
		if !m.alive {
			continue
		}
		m.catchUp(n)
		d, err := m.ledger.Digest()
		if err != nil {
			s.fail(err)
			return
		}
		if first == nil {
			first = d
		} else if !bytes.Equal(first, d) {
			c.fail(InvDigest, nil, "%s's final ledger digest at index %d differs from m0's", m.name, n)
		}
		for _, a := range c.acks {
			if c.forgotten[a.node] > a.index {
				continue // the operator removed the node, its history with it
			}
			nd, err := m.ledger.Node(a.node)
			if err != nil {
				c.fail(InvResultLost, []string{a.node, a.lease}, "%s lost node %s: %v", m.name, a.node, err)
				continue
			}
			if !hasResult(nd, a.lease, a.token, a.outcome) && len(nd.History) < m.cfg.Policy.HistoryLimit {
				c.fail(InvResultLost, []string{a.node, a.lease}, "%s's history of %s has no %s of %s (acknowledged, entry %d)", m.name, a.node, a.outcome, leaseName(a.lease, a.token), a.index)
			}
		}
	}
	c.stuck()
	c.due()
	if c.violation == nil && c.soft != nil {
		c.violation = c.soft
	}
}

// stuck checks InvStuck on the first live member's ledger (the digests agree by now).
func (c *checker) stuck() {
	s := c.s
	for _, m := range s.members {
		if !m.alive {
			continue
		}
		for _, n := range s.nodes {
			if !n.provisioning || c.operated[n.id] || c.unsure[n.id] || s.now-max(n.since, c.quietAt) < int64(stuckAfter) {
				continue
			}
			nd, err := m.ledger.Node(n.id)
			if err != nil {
				c.fail(InvStuck, []string{n.id}, "node %s has been in provisioning mode since %s and %s does not know it: %v", n.id, fmtTime(n.since), m.name, err)
				continue
			}
			switch nd.State {
			case api.StateProvisioned, api.StateShutdown, api.StateGone:
				c.fail(InvStuck, []string{n.id}, "node %s has been in provisioning mode since %s, yet %s records it %s (never registered again)", n.id, fmtTime(n.since), m.name, nd.State)
			}
		}
		return
	}
}

// truncated forgets what the checker learnt from committed entries after cut, which an election
// lost: the digests of that history always, and with recovered (a recover lost them with the
// majority, as docs/cluster.md warns) the acknowledgements, first reports, pauses and bans they
// held, whose loss is the recover's documented cost. Without recovered the loss is a defect of
// the vote rule and the invariants that see it must fire.
func (c *checker) truncated(cut uint64, lost []*entry, recovered bool) {
	for i := range c.digests {
		if i > cut {
			delete(c.digests, i)
		}
	}
	if !recovered {
		return
	}
	c.acks = slices.DeleteFunc(c.acks, func(a ack) bool { return a.index > cut })
	for k, f := range c.reports {
		if f.index > cut {
			delete(c.reports, k)
		}
	}
	kept := len(c.pauses)
	c.pauses = slices.DeleteFunc(c.pauses, func(p pauseChange) bool { return p.pos.index > cut })
	if kept > len(c.pauses) {
		// An edge may have heard a flag the lost entries set: the one left in force is news.
		c.pauses = append(c.pauses, pauseChange{at: c.s.now, pos: logPos{recovers: c.s.stats.Recovers, index: cut}, paused: c.pausedAt(c.s.now).paused, restart: true})
	}
	for id, at := range c.banned {
		if at > cut {
			delete(c.banned, id)
		}
	}
	for id, at := range c.held {
		if at > cut {
			delete(c.held, id)
		}
	}
	// An edge remembers a registration's answer (register.Queued) and leaves the node out of its
	// sweeps until register.DefaultResend: a requeue the recover lost is not asked for again
	// sooner, so the liveness check leaves such nodes out.
	for _, e := range lost {
		if r, ok := e.cmd.(*ledger.Register); ok {
			for _, n := range r.Nodes {
				c.unsure[n.Identity] = true
			}
		}
	}
}
