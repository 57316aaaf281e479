// SPDX-License-Identifier: Apache-2.0

package edgebench

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/sandbox/fleet/audit"
)

// workers is choria-provisioner's and the edge's concurrency in the side-by-side runs.
const workers = 64

// nodeCounts are the lab sizes: MUSTER_BENCH_NODES (comma-separated), else 1,000 and 10,000.
func nodeCounts(b *testing.B) []int {
	b.Helper()
	v := os.Getenv("MUSTER_BENCH_NODES")
	if v == "" {
		return []int{1000, 10000}
	}
	var out []int
	for s := range strings.SplitSeq(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			b.Fatalf("MUSTER_BENCH_NODES %q: %q is not a positive node count", v, s)
		}
		out = append(out, n)
	}
	return out
}

// benchRuns runs spec b.N times, each on a fresh lab, and reports the figures.
func benchRuns(b *testing.B, spec runSpec) []runResult {
	b.Helper()
	var runs []runResult
	for range b.N {
		runs = append(runs, runOnce(b, spec))
	}
	reportRuns(b, runs)
	return runs
}

// BenchmarkEdge is muster-edge with 64 workers and choria-provisioner's exec shell helper, the sample
// helper forked per node (Go instead of shell) and the persistent sample helper.
func BenchmarkEdge(b *testing.B) {
	bin := binDir(b)
	script := writeHelper(b, b.TempDir())
	for _, kind := range []helperKind{execShell, execSample, persistent} {
		for _, n := range nodeCounts(b) {
			if kind == execSample && n > 1000 {
				continue // a comparison of helpers, not of scale
			}
			b.Run(fmt.Sprintf("%s/%d", kind, n), func(b *testing.B) {
				benchRuns(b, runSpec{nodes: n, start: edgeCommand(bin, script, kind, workers)})
			})
		}
	}
}

// BenchmarkChoriaProvisioner is the unmodified choria-provisioner named by
// MUSTER_CHORIA_PROVISIONER_BIN with the same lab, flow, exec shell helper and 64 workers. make
// never builds it; without the variable the benchmark is skipped.
func BenchmarkChoriaProvisioner(b *testing.B) {
	bin := choriaProvisionerBin(b)
	if bin == "" {
		b.Skip("MUSTER_CHORIA_PROVISIONER_BIN does not name a choria-provisioner binary")
	}
	if _, err := os.Stat(bin); err != nil {
		b.Fatalf("MUSTER_CHORIA_PROVISIONER_BIN: %v", err)
	}
	script := writeHelper(b, b.TempDir())
	for _, n := range nodeCounts(b) {
		b.Run(fmt.Sprintf("exec/%d", n), func(b *testing.B) {
			benchRuns(b, runSpec{nodes: n, start: choriaProvisionerCommand(bin, script, workers)})
		})
	}
}

// choriaProvisionerBin is $MUSTER_CHORIA_PROVISIONER_BIN, else the deprecated
// $MUSTER_ANCHOR_BIN (accepted for one release, with a warning).
func choriaProvisionerBin(b *testing.B) string {
	if bin := os.Getenv("MUSTER_CHORIA_PROVISIONER_BIN"); bin != "" {
		return bin
	}
	bin := os.Getenv("MUSTER_ANCHOR_BIN")
	if bin != "" {
		b.Log("MUSTER_ANCHOR_BIN is deprecated and goes in the next release: use MUSTER_CHORIA_PROVISIONER_BIN")
	}
	return bin
}

// inFlightDelay holds every emulated node's jwt reply back, so that with as many workers as
// nodes every host flow is in flight at once while the edge's peak RSS is taken.
const inFlightDelay = 3 * time.Second

// BenchmarkEdgeRSS is muster-edge's peak resident set with 1,000 hosts in flight: 1,000 workers,
// the persistent helper, and every node's jwt answered after 3 s. peak-in-flight is the most
// host flows that overlapped (from each node's jwt request to its restart), from actions.jsonl.
func BenchmarkEdgeRSS(b *testing.B) {
	const n = 1000
	bin := binDir(b)
	spec := runSpec{
		nodes:  n,
		faults: []string{fmt.Sprintf("glob=*:slow=%s@%s", inFlightDelay, "choria_provision#jwt")},
		start:  edgeCommand(bin, "", persistent, n),
	}
	b.Run(fmt.Sprintf("inflight/%d", n), func(b *testing.B) {
		var peak int
		for range b.N {
			r := runOnce(b, spec)
			peak = max(peak, peakInFlight(b, r))
			b.ReportMetric(float64(r.usage.PeakRSS)/(1<<20), "rss-MB")
		}
		b.ReportMetric(float64(peak), "peak-in-flight")
		b.ReportMetric(0, "ns/op")
	})
}

// peakInFlight is the most nodes whose flows overlapped: a flow starts inFlightDelay before its
// recorded jwt reply and ends at its successful restart.
func peakInFlight(b *testing.B, r runResult) int {
	b.Helper()
	type event struct {
		at    time.Time
		delta int
	}
	var events []event
	for _, a := range r.actions {
		if !a.OK {
			continue
		}
		switch a.Action {
		case "choria_provision#jwt":
			events = append(events, event{a.Time.Add(-inFlightDelay), +1})
		case audit.Restart:
			events = append(events, event{a.Time, -1})
		}
	}
	// At equal times a flow's end is counted before another's start.
	slices.SortFunc(events, func(x, y event) int {
		if c := x.at.Compare(y.at); c != 0 {
			return c
		}
		return x.delta - y.delta
	})
	cur, peak := 0, 0
	for _, e := range events {
		cur += e.delta
		peak = max(peak, cur)
	}
	return peak
}
