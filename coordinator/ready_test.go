// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"testing"

	"github.com/seed96588659/muster/pkg/testkit"
)

// TestService_ReadyOnceALeaderIsKnownAndCaughtUp: every member of a running cluster becomes
// ready; a member left alone (its peers stopped) loses its leader and stops being ready.
func TestService_ReadyOnceALeaderIsKnownAndCaughtUp(t *testing.T) {
	c := newCluster(t, 3, false)
	leader := c.startAll()
	c.register("ams", nodeIDs("r", 10)...)
	for _, m := range c.running() {
		testkit.WaitFor(t, waitLimit, "member "+m.id+" ready", func() bool { return m.service().Ready() == nil })
	}
	for _, m := range c.running() {
		if m != leader {
			c.stop(m)
		}
	}
	testkit.WaitFor(t, waitLimit, "the lone member not ready", func() bool { return leader.service().Ready() != nil })
}
