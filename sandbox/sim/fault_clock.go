// SPDX-License-Identifier: Apache-2.0

package sim

import "time"

// wallStepFault steps a member's wall clock, by seconds or by a quarter of an hour either way;
// its monotonic clock does not move.
func wallStepFault() fault {
	return fault{name: "wall-step", every: 2 * time.Minute, inject: func(s *Sim) {
		m := pick(s, s.members)
		if !m.wallSteps {
			return
		}
		d := s.between(time.Second, 40*time.Second)
		if s.chance(0.2) {
			d = 15 * time.Minute
		}
		if s.chance(0.5) {
			d = -d
		}
		m.clock.step(d)
		s.tracef(nil, "fault", "%s's wall clock steps %s (now %+v from real)", m.name, d, time.Duration(m.clock.wall))
	}}
}
