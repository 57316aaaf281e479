// SPDX-License-Identifier: Apache-2.0

package sim

import "time"

// sigkillFault kills an edge process and restarts it on its journal, whose open intents it
// then reports under their original lease id and token.
func sigkillFault() fault {
	return fault{name: "sigkill", every: 2 * time.Minute, inject: func(s *Sim) {
		e := s.aliveEdge()
		if e == nil {
			return
		}
		e.kill()
		s.after(s.between(time.Second, 30*time.Second), func() {
			if !e.alive {
				e.restart()
			}
		})
	}}
}
