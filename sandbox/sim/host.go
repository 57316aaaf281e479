// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"time"

	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/api"
)

// node is a machine of the lab, as the world sees it (not as the ledger records it).
type node struct {
	id     string
	region string
	// provisioning is true while the node is in provisioning mode, so sweeps find it; since is
	// when it last came into it (real time, 0 for the nodes that start in it).
	provisioning bool
	since        int64
	// lockEdge holds go-choria's provisioning lock until lockUntil (real time); a restart of
	// the node's server drops it.
	lockEdge  string
	lockUntil int64
}

// lockWindow is go-choria's provisioning lock (LockWindow), also the ledger's lock_window here.
const lockWindow = 2 * time.Minute

// host is one node's flow on an edge (edge/hostflow as a sequence of calls): each call is an
// act on the node, made only while the edge may (dispatch's pause source: not paused, the
// lease valid on the edge's clock, the node still held); the last one takes the node out of
// provisioning mode after a journal intent.
type host struct {
	hl      *heldLease
	node    string
	steps   int
	acts    int
	final   api.Outcome
	why     string // the final result's error (a duplicate responder's)
	long    bool
	done    bool
	touched bool
	iv      *interval
}

func newHost(hl *heldLease, id string) *host {
	s := hl.e.s
	ho := &host{hl: hl, node: id, steps: 2 + s.rng.IntN(5), long: s.chance(s.world.longHosts)}
	switch p := s.rng.Float64(); {
	case p < 0.70:
		ho.final = api.OutcomeProvisioned
	case p < 0.82:
		ho.final = api.OutcomeFailed
	case p < 0.87:
		ho.final = api.OutcomeDeferred
	case p < 0.92:
		ho.final = api.OutcomeShutdown
	default:
		ho.final = api.OutcomeUpgradeSent
	}
	if why, ok := s.duplicate(id); ok {
		ho.final, ho.why = api.OutcomeFailed, why
	}
	return ho
}

// holds is Held.Holds, as the checker reads it.
func holds(h *lease.Held, id string) bool { return h.Holds(id) }

// stepDelay is the time between two calls of a flow: mostly seconds, for a long host (a slow
// helper, an upgrade) up to minutes.
func (ho *host) stepDelay() time.Duration {
	s := ho.hl.e.s
	if ho.long {
		return s.between(10*time.Second, 90*time.Second)
	}
	return s.between(50*time.Millisecond, 500*time.Millisecond) + s.expo(1500*time.Millisecond)
}

// step is the host's next call, checked as dispatch's pause source checks it.
func (e *edge) step(ho *host) {
	s := e.s
	if ho.done {
		return
	}
	valid := ho.hl.h.Valid(e.clock.monoTime())
	if e.pause.Paused() || !valid || !ho.hl.h.Holds(ho.node) {
		// Given back without a failure of the node's own, stopped mid-flow by lease loss too:
		// released, as edge/dispatch.go's leased.API reports it.
		why := "paused"
		switch {
		case !valid && ho.touched:
			why = "stopped by lease loss"
		case !valid:
			why = "lease ran out before the flow began"
		case !ho.hl.h.Holds(ho.node):
			why = "no longer held: a renewal left it out"
		}
		e.finish(ho, api.NodeResult{Identity: ho.node, Outcome: api.OutcomeReleased, Error: why})
		return
	}
	n := s.node(ho.node)
	s.check.act(e, ho)
	first := !ho.touched
	ho.touched = true
	ho.acts++
	switch {
	case first && !n.provisioning:
		// Its first call gets no answer and a rediscovery no longer finds it.
		e.finish(ho, api.NodeResult{Identity: ho.node, Outcome: api.OutcomeGone})
		return
	case n.lockEdge != "" && n.lockEdge != e.name && n.lockUntil > s.now:
		e.finish(ho, api.NodeResult{Identity: ho.node, Outcome: api.OutcomeLockHeld, Error: "Could not obtain provisioning lock"})
		return
	}
	n.lockEdge, n.lockUntil = e.name, s.now+int64(lockWindow)
	if ho.acts < ho.steps {
		e.after(ho.stepDelay(), func() { e.step(ho) })
		return
	}
	switch ho.final {
	case api.OutcomeProvisioned, api.OutcomeShutdown:
		// restart or shutdown: journaled first; the node leaves provisioning mode and answers
		// nothing more, so the confirmer settles the result by rediscovery after ConfirmAfter.
		in := &intent{node: ho.node, lease: ho.hl.l.ID, token: ho.hl.l.Token, region: ho.hl.l.Region, outcome: ho.final}
		e.journal = append(e.journal, in)
		s.leave(n)
		e.end(ho)
		hl := ho.hl
		e.after(e.confirmAfter, func() { e.take(hl.h, e.confirm(in)) })
		return
	case api.OutcomeUpgradeSent:
		n.lockEdge, n.lockUntil = "", 0
	}
	e.finish(ho, api.NodeResult{Identity: ho.node, Outcome: ho.final, Error: ho.why})
}

// confirm settles an unanswered restart or shutdown by rediscovery: a node still in
// provisioning mode did not act on it (edge/confirm.go).
func (e *edge) confirm(in *intent) api.NodeResult {
	if e.s.node(in.node).provisioning {
		return api.NodeResult{Identity: in.node, Outcome: api.OutcomeFailed, Error: "still in provisioning mode after " + string(in.outcome)}
	}
	return api.NodeResult{Identity: in.node, Outcome: in.outcome}
}

// end ends a host's flow: it acts no more and its place is free.
func (e *edge) end(ho *host) {
	ho.done = true
	e.busy--
	e.s.check.hostEnded(ho)
	e.acquireIn(0)
}

// finish ends a host and takes its result to be reported; the lease is renewed until it is
// settled.
func (e *edge) finish(ho *host, r api.NodeResult) {
	e.end(ho)
	e.take(ho.hl.h, r)
}

// leave takes n out of provisioning mode (its server restarts into its configuration, or shuts
// down); now and then it comes back into provisioning mode later (re-imaged, a failed restart).
func (s *Sim) leave(n *node) {
	n.provisioning = false
	n.lockEdge, n.lockUntil = "", 0
	if s.chance(s.world.comeBack) {
		d := s.between(30*time.Second, 4*time.Minute)
		if s.chance(0.5) {
			d = s.between(2*time.Second, 30*time.Second)
		}
		s.after(d, func() {
			if !n.provisioning {
				n.provisioning, n.since = true, s.now
				s.tracef([]string{n.id}, n.id, "back in provisioning mode")
			}
		})
	}
}

func (s *Sim) node(id string) *node {
	for _, n := range s.nodes {
		if n.id == id {
			return n
		}
	}
	return nil
}
