// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import "testing"

// TestService_ReadyOnceALeaderIsKnownAndCaughtUp: every member of a running cluster becomes
// ready; a member left alone (its peers stopped) loses its leader and stops being ready.
func TestService_ReadyOnceALeaderIsKnownAndCaughtUp(t *testing.T) {
	c := newCluster(t, 3, false)
	leader := c.startAll()
	c.register("ams", nodeIDs("r", 10)...)
	for _, m := range c.running() {
		waitFor(t, "member "+m.id+" ready", func() bool { return m.service().Ready() == nil })
	}
	for _, m := range c.running() {
		if m != leader {
			c.stop(m)
		}
	}
	waitFor(t, "the lone member not ready", func() bool { return leader.service().Ready() != nil })
}
