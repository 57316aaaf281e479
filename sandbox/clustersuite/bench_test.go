// SPDX-License-Identifier: Apache-2.0

package clustersuite

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
)

// BenchmarkClusterEdge provisions a fresh 1,000-node lab with one edge, standalone and then in
// cluster mode against the suite's three coordinators, and reports nodes/min of each (from the
// edge's start to its 1,000th provisioned result). Both edges use the same settings: 64
// workers, batches of 256, the persistent sample helper.
func BenchmarkClusterEdge(b *testing.B) {
	const count = 1000
	for _, mode := range []struct {
		name       string
		region     string
		standalone bool
	}{{"standalone", "bs", true}, {"cluster", "bc", false}} {
		// The ledger keeps the identities of a cluster run's lab as provisioned: each run gets
		// its own region, and a standalone one needs no coordinator.
		b.Run(mode.name, func(b *testing.B) {
			var total time.Duration
			for range b.N {
				b.StopTimer()
				region := mode.region
				if !mode.standalone {
					suite.benchRuns++
					region = fmt.Sprintf("bc%d", suite.benchRuns)
					if !slices.Contains(suiteRegions, region) {
						b.Fatalf("no edge credential for region %s: run with -benchtime 1x and at most -count 5", region)
					}
				}
				l := startLab(b, lab.Options{Regions: []string{region}, Emulated: count})
				b.StartTimer()
				start := time.Now()
				e := startEdge(b, l, edgeSpec{region: region, n: 1, standalone: mode.standalone, tune: func(c *config.Config) {
					c.Workers, c.BatchSize, c.Interval, c.HelperPersistent = 64, 256, time.Minute, true
					c.Helper += " --persistent"
				}})
				testkit.WaitFor(b, 3*time.Minute, "1000 nodes provisioned", func() (bool, string) {
					s := e.App.Edge.Stats()
					return s.Outcomes[hostflow.Provisioned] >= count, fmt.Sprintf("%+v", s)
				})
				total += time.Since(start)
				b.StopTimer()
				e.Shutdown(b)
				_ = l.Stop()
				b.StartTimer()
			}
			b.ReportMetric(float64(count*b.N)/total.Minutes(), "nodes/min")
		})
	}
}
