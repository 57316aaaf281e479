// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"fmt"
	"time"

	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/edge/register"
	"github.com/seed96588659/muster/pkg/api"
)

// reportFor is how long an edge retries one report (edge/lease.CoordinatorOptions.ReportFor).
const reportFor = 2 * time.Minute

// edge is one muster-edge process, as edge/dispatch.go drives its leases, over the edge's own
// rules in edge/lease: it acquires batches of its region's nodes (CheckGrant), counts each lease
// with Held on its own drifting monotonic clock and renews it while it Renews at its RenewPace,
// runs one host per node (host.go), batches the results per lease (Batches) and reports them
// under the lease's id and token, carried by the next acquire or alone (Outbox, Answers,
// Reported), takes the pause flag of every answer (PauseFlag), heartbeats and sweeps for nodes
// in provisioning mode. What is simulated is the process: its calls over the simulated network,
// its clock, its hosts' calls and its journal, which survives a SIGKILL.
type edge struct {
	proc
	region string
	clock  *clock
	c      *caller
	cap    int
	margin time.Duration
	hb     time.Duration
	sweep  time.Duration

	pause     lease.PauseFlag // the cluster's pause flag, as the newest answer carrying it said
	busy      int             // hosts running
	acquiring bool
	planned   bool // an acquire is scheduled
	seq       int
	leases    []*heldLease
	journal   []*intent
	// queued is the real source's memory of the nodes answered as waiting or leased, which
	// sweeps leave out until a result; a new incarnation starts without it.
	queued *register.Queued
	// lastAnswer is the newest place in the log an answer this run received was made at: an
	// edge that got an answer made after a pause committed could have learned of the pause.
	lastAnswer logPos
	// confirmAfter is how long the edge waits to settle an unanswered restart or shutdown by
	// rediscovery, and a restarted edge its journal's open intents.
	confirmAfter time.Duration
	// carry is whether this edge's source carries reports with its acquires (lease.Carrier):
	// the seed chooses it per edge, so both the carried and the lone path run.
	carry bool
	// carries is the last acquire answer's CarriesReports (lease.Coordinator.Carries): reports
	// are parked only for a leader that takes them. parked are the reports waiting for an
	// acquire (carry.go); both are lost with the process.
	carries bool
	parked  lease.Outbox[*delivery]
	// batches are the results waiting to be reported with more of their lease's (lease.Batches,
	// as the real edge's reporter); lost with the process.
	batches lease.Batches[api.NodeResult]
}

// heldLease is one lease of this run: the real Held (which also counts the results not settled
// yet: lease.Held.Renews) and its hosts.
type heldLease struct {
	e     *edge
	h     *lease.Held
	l     api.Lease
	hosts []*host
}

// intent is a journal record: a call that takes the node out of provisioning mode was sent
// under this lease (edge/journal), settled once its result was answered.
type intent struct {
	node    string
	lease   string
	token   uint64
	region  string
	outcome api.Outcome
}

func (e *edge) rid(what string) string {
	e.seq++
	return fmt.Sprintf("%s.%d.%s%d", e.name, e.inc, what, e.seq)
}

func (e *edge) start() {
	e.alive = true
	e.c.reset()
	e.pause, e.busy, e.acquiring, e.planned, e.leases, e.lastAnswer = lease.PauseFlag{}, 0, false, false, nil, logPos{}
	e.carries, e.parked, e.batches = false, lease.Outbox[*delivery]{}, lease.Batches[api.NodeResult]{}
	e.queued = register.NewQueued(register.DefaultResend)
	e.after(e.s.between(0, time.Second), e.heartbeat)
	e.after(e.s.between(0, 3*time.Second), e.sweepOnce)
	e.acquireIn(e.s.between(time.Second, 3*time.Second))
	if len(e.journal) > 0 {
		// As edge/result.go's replay tells its source (lease.Unsettler): an earlier
		// incarnation's report of these nodes may still land.
		for _, in := range e.journal {
			e.queued.Unsure(e.clock.monoTime(), in.node)
		}
		e.after(e.confirmAfter, e.replay)
	}
}

// kill is SIGKILL: everything but the journal is gone.
func (e *edge) kill() {
	e.alive = false
	e.stoppedUntil = 0
	e.s.check.killed(e)
	e.s.tracef([]string{e.name}, e.who(), "SIGKILL (%d journal intents open)", len(e.journal))
}

// restart starts a new incarnation on the same journal.
func (e *edge) restart() {
	e.inc++
	e.s.tracef([]string{e.name}, e.who(), "restarted; replays %d journal intents after %s", len(e.journal), e.confirmAfter)
	e.start()
}

// wake is SIGCONT.
func (e *edge) wake() {
	if e.stoppedUntil > e.s.now {
		e.stoppedUntil = e.s.now
		e.s.tracef([]string{e.name}, e.who(), "SIGCONT")
	}
}

func (e *edge) receive(m *message) {
	e.run(m.toInc, func() { e.c.answer(m) })
}

// setPaused is dispatch's setClusterPaused, from any answer that carries the flag: a flag read
// before the one the edge holds is dropped (lease.PauseFlag).
func (e *edge) setPaused(p bool, at api.PauseMark, seen logPos) {
	if seen.atOrAfter(e.lastAnswer) {
		e.lastAnswer = seen
	}
	held, heldAt := e.pause.Paused(), e.pause.At()
	taken, changed := e.pause.Take(p, at)
	switch {
	case !taken:
		e.s.tracef([]string{e.name}, e.who(), "drops paused=%t as of %+v: holds paused=%t as of %+v", p, at, held, heldAt)
	case changed:
		e.s.tracef([]string{e.name}, e.who(), "learns paused=%t", p)
		if !p {
			e.acquireIn(0)
		}
	}
}

// acquireIn schedules the next acquire unless one is running or scheduled: one acquire loop.
func (e *edge) acquireIn(d time.Duration) {
	if e.planned || e.acquiring {
		return
	}
	e.planned = true
	e.after(d, func() {
		e.planned = false
		e.acquire()
	})
}

func (e *edge) heartbeat() {
	limit := max(4*e.hb, 2*time.Second)
	e.c.start(kindHeartbeat, api.HeartbeatRequest{Edge: e.name, Region: e.region}, limit/3, e.s.now+int64(limit), 0, func(resp any, seen logPos, err error) {
		if err == nil {
			r := resp.(api.HeartbeatResponse)
			e.setPaused(r.Paused, r.PauseAt(), seen)
		}
		e.after(e.hb, e.heartbeat)
	})
}

// sweepOnce registers the region's nodes found in provisioning mode, leaving out those the
// source's Queued leaves out; a sweep older than RegisterFresh (2 s) is not registered.
func (e *edge) sweepOnce() {
	defer e.after(e.sweep, e.sweepOnce)
	var found []register.Found
	for _, n := range e.s.nodes {
		if n.region == e.region && n.provisioning {
			found = append(found, register.Found{Identity: n.id})
		}
	}
	found, answered := e.queued.Filter(e.clock.monoTime(), found)
	if len(found) == 0 {
		return
	}
	req := api.RegisterRequest{Region: e.region, Edge: e.name}
	for _, f := range found {
		req.Nodes = append(req.Nodes, api.RegisterNode{Identity: f.Identity})
	}
	e.c.start(kindRegister, req, 2*time.Second, e.s.now+int64(2*time.Second), 0, func(resp any, _ logPos, err error) {
		if err != nil {
			answered(nil)
			return
		}
		r := resp.(api.RegisterResponse)
		answered(&r)
	})
}

// acquire asks for a lease on as many nodes as it has free places, as dispatch does, carrying
// the reports parked for it.
func (e *edge) acquire() {
	free := e.cap - e.busy
	if !e.alive || e.acquiring || e.pause.Paused() || free <= 0 {
		return
	}
	e.acquiring = true
	sent := e.clock.monoTime()
	parked := e.takeParked()
	req := api.AcquireRequest{Edge: e.name, Region: e.region, MaxNodes: free, RequestID: e.rid("a"), Reports: carriedRequests(parked)}
	if len(parked) > 0 {
		e.s.tracef([]string{e.name}, e.who(), "acquire %s carries reports %v", req.RequestID, requestIDs(req.Reports))
	}
	e.c.start(kindAcquire, req, 5*time.Second, 0, 3*len(e.s.members)+2, func(resp any, seen logPos, err error) {
		e.acquiring = false
		if err != nil {
			e.settleCarried(parked, nil, seen)
			e.acquireIn(time.Second)
			return
		}
		r := resp.(api.AcquireResponse)
		e.carries = r.CarriesReports
		e.settleCarried(parked, r.Reports, seen)
		if r.Lease != nil {
			if serr := lease.CheckGrant(*r.Lease, free, e.name, e.region); serr != nil {
				e.s.tracef(leaseTags(*r.Lease), e.who(), "refuses lease %s: %v", leaseName(r.Lease.ID, r.Lease.Token), serr)
				r.Lease = nil
			}
		}
		e.setPaused(r.Paused, r.PauseAt(), seen)
		if r.Lease == nil {
			// The real edge long-polls; a poll every two seconds stands in for it.
			e.acquireIn(2 * time.Second)
			return
		}
		e.granted(*r.Lease, sent, r.Held.Std())
		e.acquireIn(e.s.between(time.Millisecond, 50*time.Millisecond))
	})
}

// granted starts counting a lease from the acquire's send and runs a host per node.
func (e *edge) granted(l api.Lease, sent time.Time, held time.Duration) {
	s := e.s
	s.stats.Grants++
	hl := &heldLease{e: e, h: lease.NewHeld(l, sent, held, e.margin), l: l}
	e.leases = append(e.leases, hl)
	s.tracef(leaseTags(l), e.who(), "granted lease %s on %v (ttl %s, held %s): counts it until %s", leaseName(l.ID, l.Token), l.Nodes, l.TTL.Std(), held, e.fmtDeadline(hl.h))
	for _, id := range l.Nodes {
		ho := newHost(hl, id)
		hl.hosts = append(hl.hosts, ho)
		e.busy++
		s.check.opened(ho)
		e.after(s.between(time.Millisecond, 200*time.Millisecond), func() { e.step(ho) })
	}
	if hl.h.Expires() {
		next, _ := hl.h.RenewPace()
		e.after(next, func() { e.renew(hl) })
	}
}

// fmtDeadline is when (in real time) the edge stops counting hl, as the run's clock says.
func (e *edge) fmtDeadline(h *lease.Held) string {
	d := h.Deadline()
	if d.IsZero() {
		return "never"
	}
	return fmtTime(e.clock.realAt(d.UnixNano()))
}

// renew is one renewal of dispatch's renewer, while the lease Renews and at its RenewPace.
func (e *edge) renew(hl *heldLease) {
	s := e.s
	if !hl.h.Renews(e.clock.monoTime()) {
		return
	}
	ttl := hl.h.Lease().TTL.Std()
	next, retry := hl.h.RenewPace()
	sent := e.clock.monoTime()
	deadline := e.clock.realAt(hl.h.Deadline().UnixNano())
	req := api.RenewRequest{LeaseID: hl.l.ID, Token: hl.l.Token, Edge: e.name, Region: e.region}
	e.c.start(kindRenew, req, ttl/6, deadline, 0, func(resp any, seen logPos, err error) {
		switch {
		case err != nil && !hl.h.Renews(e.clock.monoTime()):
		case err != nil && lease.Stale(err):
			s.tracef(leaseTags(hl.l), e.who(), "renewal of %s refused: %v; hosts stop at %s", leaseName(hl.l.ID, hl.l.Token), err, e.fmtDeadline(hl.h))
		case err != nil:
			e.after(retry, func() { e.renew(hl) })
		default:
			r := resp.(api.RenewResponse)
			hl.h.Renewed(r.Lease, sent)
			s.stats.Renewals++
			s.tracef(leaseTags(hl.l), e.who(), "renewed %s: nodes %v, counts it until %s", leaseName(hl.l.ID, hl.l.Token), r.Lease.Nodes, e.fmtDeadline(hl.h))
			s.check.renewed(hl)
			e.setPaused(r.Paused, r.PauseAt(), seen)
			e.after(next, func() { e.renew(hl) })
		}
	})
}

// take batches one result of held as the real edge's reporter does (lease.Batches) and reports
// the batches it made due; a lease's first result is looked at again once it waited BatchFor
// (the real edge looks every 50 ms).
func (e *edge) take(held *lease.Held, r api.NodeResult) {
	e.report(e.batches.Add(e.clock.monoTime(), held, r))
	e.after(lease.BatchFor+50*time.Millisecond, func() { e.report(e.batches.Due(e.clock.monoTime())) })
}

// report delivers each batch under its lease's id and token with one request id over every
// try, carried by the next acquire (carry.go) or alone: alone when the batch must go alone or
// the edge's source does not carry reports.
func (e *edge) report(due []lease.Batch[api.NodeResult]) {
	for _, b := range due {
		l := b.Held.Lease()
		d := &delivery{l: l, held: b.Held, req: api.ReportRequest{LeaseID: l.ID, Token: l.Token, Edge: e.name, Region: l.Region, Results: b.Results, RequestID: e.rid("r")}}
		e.s.tracef(d.tags(), e.who(), "reports %s under %s (request %s)", fmtResults(b.Results), leaseName(l.ID, l.Token), d.req.RequestID)
		if !b.Alone && e.carry && e.carries {
			e.park(d)
			continue
		}
		e.deliver(d)
	}
}

// deliver sends d alone, for up to ReportFor.
func (e *edge) deliver(d *delivery) {
	e.c.start(kindReport, d.req, 10*time.Second, e.s.now+int64(reportFor), 0, func(resp any, seen logPos, err error) {
		var r api.ReportResponse
		if err == nil {
			r = resp.(api.ReportResponse)
		}
		e.reported(d, r, err, seen)
	})
}

// reported takes d's answer, alone or carried, made at seen: settled intents leave the journal.
func (e *edge) reported(d *delivery, r api.ReportResponse, err error, seen logPos) {
	s := e.s
	switch {
	case err == nil:
		s.stats.Reports++
		s.tracef(d.tags(), e.who(), "report %s answered: applied %v, rejected %v", d.req.RequestID, r.Applied, rejectedIDs(r.Rejected))
		s.check.acked(e, d.req, r, seen)
	case lease.Ends(err):
		s.tracef(d.tags(), e.who(), "report %s refused: %v", d.req.RequestID, err)
	default:
		s.tracef(d.tags(), e.who(), "report %s not delivered: %v", d.req.RequestID, err)
	}
	if lease.Ends(err) {
		e.settle(d.l, d.req.Results)
	}
	lease.Reported(e.queued, e.clock.monoTime(), err, ids(d.req.Results)...)
	d.held.Settled(len(d.req.Results))
}

// settle ends the journal intents of reported results.
func (e *edge) settle(l api.Lease, results []api.NodeResult) {
	kept := e.journal[:0]
	for _, in := range e.journal {
		reported := false
		for _, r := range results {
			reported = reported || in.node == r.Identity && in.lease == l.ID
		}
		if !reported {
			kept = append(kept, in)
		}
	}
	e.journal = kept
}

// replay settles the intents a previous run left open: rediscovery finds the node out of
// provisioning mode, so it reports the result under the intent's own lease id and token
// (lease.Ended: one per lease, whose results go by age).
func (e *edge) replay() {
	ended := map[string]*lease.Held{}
	for _, in := range append([]*intent(nil), e.journal...) {
		if ended[in.lease] == nil {
			ended[in.lease] = lease.Ended(api.Lease{ID: in.lease, Token: in.token, Edge: e.name, Region: in.region})
		}
		e.take(ended[in.lease], e.confirm(in))
	}
}

func leaseTags(l api.Lease) []string { return append([]string{l.ID, l.Edge}, l.Nodes...) }

func ids(rs []api.NodeResult) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Identity
	}
	return out
}

func requestIDs(rs []api.ReportRequest) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.RequestID
	}
	return out
}

func rejectedIDs(rs []api.RejectedResult) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Identity + ": " + r.Reason
	}
	return out
}

func fmtResults(rs []api.NodeResult) string {
	out := ""
	for i, r := range rs {
		if i > 0 {
			out += ", "
		}
		out += r.Identity + " " + string(r.Outcome)
	}
	return out
}
