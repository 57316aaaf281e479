// SPDX-License-Identifier: Apache-2.0

package clustersuite

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/pkg/testkit/proxy"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/labkit"
	"github.com/seed96588659/muster/sandbox/stack/wan"
)

// benchNodes is the size of every benchmark lab here.
const benchNodes = 1000

// BenchmarkClusterEdge provisions a fresh 1,000-node lab with one edge, standalone and then in
// cluster mode against the suite's three coordinators, and reports nodes/min of each (from the
// edge's start to its 1,000th provisioned result). Both edges use the same settings: 64
// workers, batches of 256, the persistent sample helper.
func BenchmarkClusterEdge(b *testing.B) {
	for _, mode := range []struct {
		name       string
		standalone bool
	}{{"standalone", true}, {"cluster", false}} {
		b.Run(mode.name, func(b *testing.B) {
			var total time.Duration
			for range b.N {
				total += provisionLab(b, benchEdge{standalone: mode.standalone})
			}
			b.ReportMetric(float64(benchNodes*b.N)/total.Minutes(), "nodes/min")
		})
	}
}

// BenchmarkFarEdge provisions a fresh 1,000-node lab with one cluster-mode edge next to the
// coordinators, then another with one placed as the far-region profile places its far edge:
// every call to a member crosses a link of 150 ms round trip (sandbox/stack/wan, jitter
// included), while the edge stays next to its nodes. It reports both rates, the far edge's
// share of the near one's (the goal is at least 0.9), and the far edge's grant and report
// latency: a grant's is its acquire call less the time the leader held it waiting for nodes
// (a long poll), a report's is its whole call, retries included; rtt- figures are in round
// trips (the goal for p99 is under 3).
func BenchmarkFarEdge(b *testing.B) {
	base, jit := wan.FarRegion.OneWay(wan.FarRegion.EdgeSite(0), wan.FarRegion.MemberSite(0))
	rtt := wan.FarRegion.RoundTrip(wan.FarRegion.EdgeSite(0), wan.FarRegion.MemberSite(0))
	var near, far time.Duration
	calls := &labkit.Calls{}
	for range b.N {
		near += provisionLab(b, benchEdge{})
		far += provisionLab(b, benchEdge{latency: proxy.Latency{Base: base, Jitter: jit}, calls: calls})
	}
	b.ReportMetric(float64(benchNodes*b.N)/near.Minutes(), "near-nodes/min")
	b.ReportMetric(float64(benchNodes*b.N)/far.Minutes(), "far-nodes/min")
	b.ReportMetric(near.Seconds()/far.Seconds(), "far/near")
	grants, reports := calls.Grants(), calls.Reports()
	testkit.ReportLatency(b, "grant", grants)
	testkit.ReportLatency(b, "report", reports)
	inRTT := func(d []time.Duration) float64 { return float64(testkit.Percentile(d, 0.99)) / float64(rtt) }
	b.ReportMetric(inRTT(grants), "grant-p99-rtt")
	b.ReportMetric(inRTT(reports), "report-p99-rtt")
	b.ReportMetric(float64(len(grants)), "grants")
	b.ReportMetric(float64(len(reports)), "reports")
}

// benchEdge is how one benchmark run's edge runs.
type benchEdge struct {
	standalone bool
	// latency is the one-way delay of each of the edge's links to the members.
	latency proxy.Latency
	// calls, when set, records the edge's grants and reports.
	calls *labkit.Calls
}

// provisionLab runs spec's edge on a fresh 1,000-node lab until every node is provisioned and
// says how long that took: 64 workers, batches of 256, the persistent sample helper. The clock
// runs from the edge's start to its 1,000th provisioned result; the lab's start and the edge's
// stop are outside it.
func provisionLab(b *testing.B, spec benchEdge) time.Duration {
	b.StopTimer()
	defer b.StartTimer()
	// The ledger keeps the identities of a cluster run's lab as provisioned: each run gets a
	// region of its own, and a standalone one needs no coordinator.
	region := "bs"
	if !spec.standalone {
		suite.benchRuns++
		region = fmt.Sprintf("bc%d", suite.benchRuns)
		if !slices.Contains(suiteRegions, region) {
			b.Fatalf("no edge credential for region %s: give BenchmarkClusterEdge -benchtime 1x and BenchmarkFarEdge at most 3x (one region per cluster lab)", region)
		}
	}
	l := startLab(b, lab.Options{Regions: []string{region}, Emulated: benchNodes})
	b.StartTimer()
	start := time.Now()
	e := startEdge(b, l, edgeSpec{region: region, n: 1, standalone: spec.standalone, latency: spec.latency,
		tune: func(c *config.Config) {
			c.Workers, c.BatchSize, c.Interval, c.HelperPersistent = 64, 256, time.Minute, true
			c.Helper += " --persistent"
		},
		tuneEdge: func(o *edge.Options) {
			if spec.calls != nil {
				spec.calls.Timed(o)
			}
		}})
	testkit.WaitFor(b, 5*time.Minute, "1000 nodes provisioned", func() (bool, string) {
		s := e.App.Edge.Stats()
		return s.Outcomes[hostflow.Provisioned] >= benchNodes, fmt.Sprintf("%+v", s)
	})
	took := time.Since(start)
	b.StopTimer()
	e.Shutdown(b)
	_ = l.Stop()
	return took
}
