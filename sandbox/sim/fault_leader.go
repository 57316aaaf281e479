// SPDX-License-Identifier: Apache-2.0

package sim

import "time"

// stepDownFault is a leadership transfer: the leader steps down and an election follows
// quickly, which may choose the same member again (a flap) while its requests are in flight.
func stepDownFault() fault {
	return fault{name: "step-down", every: time.Minute, inject: func(s *Sim) {
		l := s.raft.leader
		if l == nil || !l.ready {
			return
		}
		s.raft.electing = true
		s.stepDown(l, "leadership transfer")
		s.after(s.between(50*time.Millisecond, 800*time.Millisecond), func() { s.raft.elect(s) })
	}}
}
