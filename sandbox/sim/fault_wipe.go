// SPDX-License-Identifier: Apache-2.0

package sim

import "time"

// wipeFault replaces a member's disk: the process dies and comes back under its old id and
// address with no ledger and no raft log, as a StatefulSet restarts a pod whose volume was lost.
// Half the time it follows the sequence that made this a double grant: another member lags (cut
// from the others for a few seconds), the member the leader committed with loses its disk and
// the leader fails, so the lagging member and the empty one are left to elect. Under the learner
// rule the empty member does not vote and no leader is elected until the old one is back; with
// Options.WipedVotes it votes for the lagging member, whose log lacks what the leader committed.
func wipeFault() fault {
	return fault{name: "member-wipe", every: 5 * time.Minute, inject: func(s *Sim) {
		if !s.settledConfig() || s.now > s.end-int64(time.Minute) {
			return
		}
		l := s.raft.leader
		if l == nil || !s.chance(0.5) {
			m := pick(s, s.members)
			m.wipe("its disk was lost")
			m.startIn(s.between(time.Second, 20*time.Second))
			return
		}
		var others []*member
		for _, m := range s.members {
			if m != l {
				others = append(others, m)
			}
		}
		lag, gone := others[0], others[1]
		if s.chance(0.5) {
			lag, gone = gone, lag
		}
		cut := s.between(time.Second, 15*time.Second)
		s.changing = true
		for _, m := range s.members {
			if m != lag {
				s.net.setCut(lag.id, m.id, true)
			}
		}
		s.tracef(nil, "fault", "%s lags (cut from the members for %s); then %s loses its disk and the leader %s fails", lag.name, cut, gone.name, l.name)
		s.raft.changed(s)
		s.after(cut, func() {
			s.changing = false
			for _, m := range s.members {
				if m != lag {
					s.net.setCut(lag.id, m.id, false)
				}
			}
			gone.wipe("its disk was lost")
			gone.startIn(s.between(time.Second, 5*time.Second))
			l.restartIn = s.between(10*time.Second, 40*time.Second)
			l.crash()
		})
	}}
}
