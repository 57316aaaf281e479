// SPDX-License-Identifier: Apache-2.0

package sim

import "time"

// crashFault kills a member process (often the leader, sometimes at the failpoint right after
// it applied a report and before it answered) and restarts it on its ledger file, now and
// then with another lease TTL (a rolling configuration change).
func crashFault() fault {
	return fault{name: "member-crash", every: 3 * time.Minute, inject: func(s *Sim) {
		m := pick(s, s.members)
		if l := s.raft.leader; l != nil && s.chance(0.6) {
			m = l
		}
		if !m.alive {
			return
		}
		m.restartIn = s.between(time.Second, 20*time.Second)
		if s.chance(0.3) {
			m.cfg.TTL = s.memberConfig().TTL
			m.cfg.MaxWait = m.cfg.TTL / 3
		}
		if m.role == roleLeader && s.chance(0.5) {
			m.crashAfterReport = true
			s.tracef(nil, "fault", "%s will crash right after it applies its next report", m.name)
			return
		}
		m.crash()
	}}
}
