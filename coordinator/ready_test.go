// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"testing"

	"github.com/seed96588659/muster/coordinator/internal/testcluster"
	"github.com/seed96588659/muster/pkg/testkit"
)

// TestService_ReadyOnceALeaderIsKnownAndCaughtUp: every member of a running cluster becomes
// ready; a member left alone (its peers stopped) loses its leader and stops being ready.
func TestService_ReadyOnceALeaderIsKnownAndCaughtUp(t *testing.T) {
	c := testcluster.New(t, 3)
	leader := c.StartAll()
	c.Register("ams", testcluster.NodeIDs("r", 10)...)
	for _, m := range c.Running() {
		testkit.WaitFor(t, testcluster.WaitLimit, "member "+m.ID+" ready", func() bool { return m.Service().Ready() == nil })
	}
	for _, m := range c.Running() {
		if m != leader {
			c.Stop(m)
		}
	}
	testkit.WaitFor(t, testcluster.WaitLimit, "the lone member not ready", func() bool { return leader.Service().Ready() != nil })
}
