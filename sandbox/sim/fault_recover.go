// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"fmt"
	"slices"
	"time"

	"github.com/seed96588659/muster/coordinator/ledger"
)

// recoverFault loses a majority for good and recovers the survivor, as docs/cluster.md's
// `recover` does after a disaster: two members die with their disks, the operator stops the
// survivor, rewrites its configuration to itself alone (raft.RecoverCluster) and starts it. The
// survivor's log is the cluster's from then on: entries only the lost members held are lost, and
// with them grants the edges still hold. New members join later under the lost ids.
func recoverFault() fault {
	return fault{name: "recover", every: 10 * time.Minute, inject: func(s *Sim) {
		// The hold must end before the quiet end, whose liveness check needs nodes offered.
		if !s.settledConfig() || s.now > s.end-int64(2*time.Minute+s.recoverHold()) {
			return
		}
		survivor := pick(s, s.members)
		// Below the protocol that records the recover's hold, answers carry no pause epoch and
		// an edge orders them by index alone: a pause committed below an index the lost
		// majority reached waits for the new log to pass it (docs/cluster.md). That known
		// limit is left out of the seeds that pause.
		if slices.Contains(s.faults, "pause") && !survivor.records(ledger.HoldProtocol) {
			return
		}
		s.changing = true
		// Mostly the survivor had been cut off (its datacenter's link went first), so its log
		// lacks what the majority committed last.
		var lag time.Duration
		if s.chance(0.7) {
			lag = s.between(5*time.Second, time.Minute)
			for _, m := range s.members {
				if m != survivor {
					s.net.setCut(survivor.id, m.id, true)
				}
			}
			s.tracef(nil, "fault", "%s is cut from the members for %s, then the others are lost", survivor.name, lag)
			s.raft.changed(s)
		}
		s.after(lag, func() { s.loseMajority(survivor) })
	}}
}

// loseMajority loses every member but survivor with its disk and, a while later, recovers the
// survivor alone.
func (s *Sim) loseMajority(survivor *member) {
	s.changing = false
	for _, m := range s.members {
		if m != survivor {
			s.net.setCut(survivor.id, m.id, false)
			m.wipe("lost with the majority")
		}
	}
	{
		s.after(s.between(2*time.Second, 30*time.Second), func() {
			s.stats.Recovers++
			survivor.restartIn = s.between(time.Second, 5*time.Second)
			survivor.crash()
			for _, m := range s.members {
				if m != survivor {
					m.voter, m.learner = false, false
				}
			}
			survivor.voter, survivor.learner, survivor.fresh = true, false, false
			s.raft.recovering = true
			s.tracef(nil, "fault", "recover: %s's configuration is rewritten to itself alone (raft log at %d of %d committed)", survivor.name, survivor.logLen, len(s.raft.log))
			survivor.markRecovered()
			s.raft.quietUntil = s.now + int64(s.recoverHold())
			for _, m := range s.members {
				if m != survivor {
					m.startIn(s.between(20*time.Second, 2*time.Minute))
				}
			}
		})
	}
}

// recoverHold is how long the first leader after a recover offers no node: every edge that may
// hold a lease the survivor never saw has had the longest TTL, grace and the lock window (with
// the clocks' drift) before a node it may still act on is offered to another.
func (s *Sim) recoverHold() time.Duration {
	hold := s.maxTTL() + 5*time.Second + lockWindow
	return hold + hold/500 + time.Second
}

// markRecovered is RecoverCluster's mark on the stopped survivor's ledger, through the real
// ledger.MarkRecovered: the real lease manager of every leader that finds it holds new grants
// (lessor/hold.go), in the log from cluster protocol 7 and in its memory below.
// Options.NoRecoverHold leaves the mark out, as the builds before it did.
func (m *member) markRecovered() {
	s := m.s
	if s.opts.NoRecoverHold {
		s.tracef(nil, m.name, "recover: no mark (Options.NoRecoverHold): nodes are offered at once")
		return
	}
	l, err := ledger.Open(m.path, ledger.Options{NoSync: true})
	if err != nil {
		s.fail(fmt.Errorf("recover %s: open its ledger: %w", m.name, err))
		return
	}
	// The operator passes recover the longest lease.ttl of the cluster (--lease-ttl), which the
	// survivor's own configuration and log may not show.
	err = l.MarkRecovered(m.clock.Now(), []string{m.name}, s.maxTTL())
	if cerr := l.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		s.fail(fmt.Errorf("recover %s: %w", m.name, err))
		return
	}
	s.tracef(nil, m.name, "recover: ledger marked; its leaders hold new grants")
}

// records says whether m's ledger is open and runs at least cluster protocol p.
func (m *member) records(p int) bool {
	if m.ledger == nil {
		return false
	}
	v, err := m.ledger.ClusterProtocol()
	return err == nil && v >= p
}
