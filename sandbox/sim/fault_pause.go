// SPDX-License-Identifier: Apache-2.0

package sim

import "time"

// pauseFault is the operator pausing provisioning for a while, then resuming it.
func pauseFault() fault {
	return fault{name: "pause", every: 3 * time.Minute, inject: func(s *Sim) {
		s.op.setPause(true)
		s.after(s.between(5*time.Second, time.Minute), func() { s.op.setPause(false) })
	}}
}
