// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"time"

	"github.com/seed96588659/muster/coordinator/ledger"
)

// Mixed protocols: a seed may start with every member announcing an older cluster protocol and
// upgrade them one at a time, mid-run, to the newest (ledger.Protocol), as a rolling upgrade
// does. Every member runs this build's ledger; what differs is what each announces, so the
// cluster runs the older protocol's rules (each gated on the protocol its ledger holds) until
// the leader raises it, as coordinator/protocol.go's raiseProtocol does once every member of the
// configuration announces a newer one.

// OldestMixed is the oldest cluster protocol a seed's rolling upgrade starts from when
// Options.Protocol is zero: the oldest this build runs beside (ledger.OldestProtocol). Older
// pairings are refused by the product, and their rules are not all safe: below protocol 3 a late
// result takes a node out of a live lease without fencing it, and a new grant of it overlaps the
// live one (seed 1796666369 from protocol 1). --protocol N still runs them.
const OldestMixed = ledger.OldestProtocol

// mixedShare is the share of seeds that run a rolling upgrade when Options.Protocol is zero.
const mixedShare = 0.3

// upgradeEvery is the mean time between two members' upgrades of a rolling upgrade.
const upgradeEvery = 2 * time.Minute

// startProtocol makes the seed's members announce from, older than ledger.Protocol, and schedules
// their upgrades one at a time.
func (s *Sim) startProtocol(from int) {
	for _, m := range s.members {
		m.announce = from
	}
	s.faults = append(s.faults, "upgrade")
	order := s.rng.Perm(len(s.members))
	var next func(int)
	next = func(i int) {
		if i == len(order) {
			return
		}
		s.after(s.expo(upgradeEvery), func() {
			m := s.members[order[i]]
			s.tracef(nil, "fault", "upgrade: %s restarts on the build of protocol %d", m.name, ledger.Protocol)
			m.announce = ledger.Protocol
			if m.alive {
				m.restartIn = s.between(time.Second, 10*time.Second)
				m.crash()
			}
			next(i + 1)
		})
	}
	next(0)
}

// lowestAnnounced is what the leader may raise the cluster protocol to: the lowest protocol any
// member of the configuration announces (the leader asks them all; one that does not answer
// holds it, as a member down does here).
func (s *Sim) lowestAnnounced(l *member) int {
	v := ledger.Protocol
	for _, m := range s.members {
		if !m.inConfig() {
			continue
		}
		if m != l && !s.connected(l, m) {
			return 0
		}
		v = min(v, m.announce)
	}
	return v
}

// raiseProtocol is the leader's monitorProtocol, every second: it proposes the lowest protocol
// the members announce when that is above the cluster's.
func (m *member) raiseProtocol() {
	if m.raising || !m.alive || m.role != roleLeader || !m.ready {
		return
	}
	cur, err := m.ledger.ClusterProtocol()
	if err != nil {
		m.s.fail(err)
		return
	}
	v := m.s.lowestAnnounced(m)
	if v <= cur {
		return
	}
	m.raising = true
	inc := m.inc
	m.s.task(func() {
		defer func() { m.raising = false }()
		if _, err := m.propose(inc, &ledger.SetProtocol{Version: v}); err == nil {
			m.s.tracef(nil, m.name, "raised the cluster protocol from %d to %d", cur, v)
		}
	})
}

// clusterProtocol is the cluster protocol the leader's ledger holds, or the first running
// member's without a leader; 0 when none runs.
func (s *Sim) clusterProtocol() int {
	m := s.raft.leader
	for _, o := range s.members {
		if m == nil || !m.alive {
			m = o
		}
	}
	if m == nil || !m.alive || m.ledger == nil {
		return 0
	}
	p, err := m.ledger.ClusterProtocol()
	if err != nil {
		s.fail(err)
		return 0
	}
	return p
}
