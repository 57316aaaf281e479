// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"fmt"
	"time"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/coordinator/lessor"
)

// world is the seed's choice of lab and behaviour.
type world struct {
	// longHosts is the share of hosts whose calls are minutes apart.
	longHosts float64
	// comeBack is the chance a node that left provisioning mode comes back into it.
	comeBack float64
	// cutFor is the mean length of a partition.
	cutFor time.Duration
	// reportMemory is the shortest ReportMemory of the members: a report retried within it
	// must be answered as the first try was.
	reportMemory time.Duration
}

// memberConfig is a member's lease configuration; a seed may give each member its own TTL.
func (s *Sim) memberConfig() lessor.Config {
	ttl := pick(s, []time.Duration{10 * time.Second, 15 * time.Second, 30 * time.Second, 60 * time.Second})
	return lessor.Config{
		TTL:   ttl,
		Grace: pick(s, []time.Duration{time.Second, 2 * time.Second, 5 * time.Second}),
		// The manager's own goroutines never act: the simulation calls ExpireDue and acquires
		// with Wait 0.
		MaxWait: ttl / 3, ExpiryInterval: 24 * time.Hour, Recheck: 24 * time.Hour,
		Extension:    pick(s, []time.Duration{500 * time.Millisecond, time.Second}),
		ReportMemory: 15 * time.Minute,
		Policy:       ledger.DefaultPolicy(),
	}
}

// skew is a member's wall clock offset: small, or (some seeds) far ahead or behind.
func (s *Sim) skew(wild bool) time.Duration {
	if !wild || s.chance(0.3) {
		return s.between(-2*time.Second, 2*time.Second)
	}
	return pick(s, []time.Duration{-20 * time.Minute, -time.Minute, time.Minute, 15 * time.Minute, 20 * time.Minute}) + s.between(0, 10*time.Second)
}

// build creates the seed's lab, cluster and edges and schedules their start and the faults.
func (s *Sim) build() error {
	s.world = world{
		longHosts: pick(s, []float64{0, 0.1, 0.3, 0.5}), comeBack: pick(s, []float64{0.2, 0.5, 0.8}), reportMemory: 15 * time.Minute,
		cutFor: pick(s, []time.Duration{10 * time.Second, 40 * time.Second, 90 * time.Second}),
	}
	s.raft.flap = pick(s, []float64{0, 0.5, 0.9})
	s.regions = []string{"eu"}
	if s.chance(0.4) {
		s.regions = append(s.regions, "us")
	}
	for _, r := range s.regions {
		for i := range 3 + s.rng.IntN(6) {
			s.nodes = append(s.nodes, &node{id: fmt.Sprintf("%s%d", r, i+1), region: r, provisioning: true})
		}
	}
	s.buildApprovals()
	wild := s.chance(0.5)
	sameTTL := s.chance(0.4)
	policy := ledger.DefaultPolicy()
	policy.ReprovisionAfter = pick(s, []time.Duration{5 * time.Second, 10 * time.Second, 30 * time.Second})
	slow := pick(s, []float64{0.02, 0.05, 0.1, 0.2})
	for i := range 3 {
		cfg := s.memberConfig()
		cfg.Policy = policy
		if sameTTL && i > 0 {
			cfg = s.members[0].cfg
		}
		m := newMember(s, i, cfg, s.skew(wild))
		m.slow = slow
		s.members = append(s.members, m)
	}
	nEdges := 2 + s.rng.IntN(3)
	procs := len(s.members) + nEdges + 1
	s.net = newNetwork(s, procs)
	s.net.drop = pick(s, []float64{0, 0.01, 0.05})
	s.net.dup = pick(s, []float64{0, 0.01, 0.05})
	s.net.late = pick(s, []float64{0, 0.002, 0.01})
	for i, m := range s.members {
		if err := m.open(); err != nil {
			return err
		}
		s.net.recv[i] = m.receive
	}
	for i := range nEdges {
		e := &edge{
			proc:   proc{s: s, id: len(s.members) + i, name: fmt.Sprintf("e%d", i+1)},
			region: s.regions[i%len(s.regions)],
			clock:  newClock(s, 1000, 0),
			cap:    1 + s.rng.IntN(4),
			margin: pick(s, []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}),
			hb:     time.Second,
			sweep:  pick(s, []time.Duration{10 * time.Second, 20 * time.Second, 30 * time.Second}),
		}
		e.confirmAfter = s.between(2*time.Second, 30*time.Second)
		e.carry = s.chance(0.5)
		e.c = newCaller(&e.proc)
		s.edges = append(s.edges, e)
		s.net.recv[e.id] = e.receive
		e.start()
	}
	s.op = &operator{proc: proc{s: s, id: procs - 1, name: "op", alive: true}}
	s.op.c = newCaller(&s.op.proc)
	s.net.recv[s.op.id] = func(m *message) { s.op.run(m.toInc, func() { s.op.c.answer(m) }) }
	s.tracef(nil, "sim", "seed %d: %d members (ttl %s/%s/%s), %d edges, %d nodes in %v", s.opts.Seed, len(s.members),
		s.members[0].cfg.TTL, s.members[1].cfg.TTL, s.members[2].cfg.TTL, nEdges, len(s.nodes), s.regions)
	for _, m := range s.members {
		s.tracef(nil, m.name, "wall clock %+v from real, drift %d ppm, grace %s", time.Duration(m.clock.wall), m.clock.ppm, m.cfg.Grace)
	}
	for _, e := range s.edges {
		s.tracef([]string{e.name}, e.name, "region %s, %d places, margin %s, drift %d ppm, carries reports with acquires: %t", e.region, e.cap, e.margin, e.clock.ppm, e.carry)
	}
	s.raft.changed(s)
	s.after(time.Second, s.expireTick)
	from := s.opts.Protocol
	if from == 0 && s.chance(mixedShare) {
		from = pick(s, []int{OldestMixed, ledger.Protocol - 1})
	}
	if from > 0 && from < ledger.Protocol {
		s.startProtocol(from)
	}
	s.startFaults()
	return nil
}

// operator is the admin who pauses and resumes provisioning.
type operator struct {
	proc
	c *caller
}

func (o *operator) setPause(paused bool) {
	s := o.s
	s.tracef(nil, "op", "asks to set pause=%t", paused)
	o.c.start(kindPause, pauseRequest{paused: paused}, 5*time.Second, 0, 3*len(s.members)+2, func(resp any, _ logPos, err error) {
		s.tracef(nil, "op", "pause=%t answered: %v %v", paused, resp, err)
	})
}
