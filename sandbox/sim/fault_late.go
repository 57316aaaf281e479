// SPDX-License-Identifier: Apache-2.0

package sim

import "time"

// lateFault makes an edge's messages, both ways, take seconds to minutes for a while (a stuck
// proxy): its reports then arrive long after its leases ended.
func lateFault() fault {
	return fault{name: "late-link", every: 2 * time.Minute, inject: func(s *Sim) {
		e := pick(s, s.edges)
		d := s.between(10*time.Second, time.Minute)
		s.net.slowUntil[e.id] = max(s.net.slowUntil[e.id], s.now+int64(d))
		s.tracef([]string{e.name}, "fault", "%s's messages are late (5 s to 3 min) for %s", e.name, d)
	}}
}
