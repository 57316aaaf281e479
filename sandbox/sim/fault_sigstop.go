// SPDX-License-Identifier: Apache-2.0

package sim

import "time"

// sigstopFault stops an edge process, often past its leases: its clocks run on, it does
// nothing until SIGCONT, then acts only as its Held counts allow.
func sigstopFault() fault {
	return fault{name: "sigstop", every: 2 * time.Minute, inject: func(s *Sim) {
		e := s.aliveEdge()
		if e == nil {
			return
		}
		d := s.between(time.Second, 3*s.maxTTL())
		e.stoppedUntil = s.now + int64(d)
		s.tracef([]string{e.name}, e.who(), "SIGSTOP for %s", d)
		inc := e.inc
		s.after(d, func() {
			if e.alive && e.inc == inc {
				s.tracef([]string{e.name}, e.who(), "SIGCONT")
			}
		})
	}}
}
