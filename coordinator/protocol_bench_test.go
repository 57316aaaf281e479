// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"testing"
	"time"

	"github.com/seed96588659/muster/coordinator/internal/testcluster"
	"github.com/seed96588659/muster/coordinator/ledger"
)

// pollUntil checks cond every millisecond (a polling interval, for the resolution of the
// benchmarks that time the wait; testkit.WaitFor backs off to 100ms) and returns when it holds,
// failing after limit.
func pollUntil(b *testing.B, limit time.Duration, what string, cond func() bool) {
	b.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			b.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// BenchmarkCluster_BootstrapToReadyAtProtocol2: a new single member, from New to its leadership
// established (ready), which includes raising the cluster protocol to the newest; the member
// announcing 1 (nothing to raise) is the same path without that step, for comparison.
func BenchmarkCluster_BootstrapToReadyAtProtocol2(b *testing.B) {
	for _, bc := range []struct {
		name     string
		announce int
	}{{"raise", 0}, {"announces-1", 1}} {
		b.Run(bc.name, func(b *testing.B) {
			var total time.Duration
			for range b.N {
				c := testcluster.New(b, 1)
				m := c.Members[0]
				c.Announce = map[string]int{m.ID: bc.announce}
				start := time.Now()
				c.Start(m, true)
				pollUntil(b, 30*time.Second, "leadership established", m.Svc.IsLeader)
				total += time.Since(start)
				want := ledger.Protocol
				if bc.announce > 0 {
					want = bc.announce
				}
				if v, _ := m.Svc.ClusterProtocol(); v != want {
					b.Fatalf("ready at cluster protocol %d, want %d", v, want)
				}
				c.CloseAll()
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/ready")
		})
	}
}

// BenchmarkCluster_LastUpgradeToProtocol2: 3 members, one of an older build; from the start of
// its restart on the new build to cluster protocol 2 on every member, with the default interval
// at which a leader asks the members (2s).
func BenchmarkCluster_LastUpgradeToProtocol2(b *testing.B) {
	var total time.Duration
	for range b.N {
		c := testcluster.New(b, 3, testcluster.WithAPI(nil))
		c.ProtocolInterval = 2 * time.Second
		old := c.Members[0]
		c.Announce = map[string]int{old.ID: 1}
		c.StartAll()
		c.Stop(old)
		c.WaitLeader()
		delete(c.Announce, old.ID)
		start := time.Now()
		c.Start(old, false)
		pollUntil(b, 30*time.Second, "cluster protocol 2 everywhere", func() bool {
			for _, m := range c.Running() {
				if v, _ := m.Svc.ClusterProtocol(); v != 2 {
					return false
				}
			}
			return true
		})
		total += time.Since(start)
		c.CloseAll()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/raise")
}
