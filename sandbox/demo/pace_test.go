// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/seed96588659/muster/sandbox/fleet/audit"
)

// TestPaceOf_TookAndSteadyRateFromCompletionTimes: the healthy nodes took from the start to the
// last one provisioned, and the steady rate counts the nodes between the 5th and the 95th
// percentile (nearest rank) of the completion times over that span.
func TestPaceOf_TookAndSteadyRateFromCompletionTimes(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	// every returns n completions, the i-th at first + i*step, in reverse order: paceOf sorts.
	every := func(n int, first, step time.Duration) []time.Time {
		out := make([]time.Time, n)
		for i := range n {
			out[n-1-i] = start.Add(first + time.Duration(i)*step)
		}
		return out
	}
	ms := time.Millisecond
	for _, tc := range []struct {
		name      string
		done      []time.Time
		want      Pace
		perMinute float64
	}{
		{name: "none", done: nil, want: Pace{}},
		{name: "one node has no steady rate", done: every(1, 2*time.Second, 0),
			want: Pace{Nodes: 1, Took: 2 * time.Second}},
		{name: "all at once has no steady rate", done: every(5, time.Second, 0),
			want: Pace{Nodes: 5, Took: time.Second}},
		{
			// 100 nodes every 10ms from 1s: p5 is the 5th (1.04s), p95 the 95th (1.94s); 90
			// nodes after the 5th percentile up to the 95th in 0.9s.
			name: "even", done: every(100, time.Second, 10*ms),
			want:      Pace{Nodes: 100, Took: time.Second + 990*ms, SteadyFrom: time.Second + 40*ms, SteadyTo: time.Second + 940*ms, SteadyNodes: 90},
			perMinute: 6000,
		},
		{
			// 20 nodes every 100ms from 0.5s, then one straggler 30s later (an edge's retry):
			// took says 32s, the steady rate ignores it. Of 21, p5 is the 2nd (0.6s), p95 the
			// 20th (2.4s).
			name: "a straggler", done: append(every(20, 500*ms, 100*ms), start.Add(32*time.Second)),
			want:      Pace{Nodes: 21, Took: 32 * time.Second, SteadyFrom: 600 * ms, SteadyTo: 2400 * ms, SteadyNodes: 18},
			perMinute: 600,
		},
		{
			// A node provisioned before the start (an edge at work before the other was ready)
			// counts from where it is.
			name: "before the start", done: []time.Time{start.Add(-100 * ms), start.Add(100 * ms), start.Add(300 * ms)},
			want:      Pace{Nodes: 3, Took: 300 * ms, SteadyFrom: -100 * ms, SteadyTo: 300 * ms, SteadyNodes: 2},
			perMinute: 300,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := paceOf(start, tc.done)
			if got != tc.want {
				t.Fatalf("paceOf = %+v, want %+v", got, tc.want)
			}
			if r := got.SteadyPerMinute(); math.Abs(r-tc.perMinute) > 1e-6 {
				t.Fatalf("SteadyPerMinute = %v, want %v", r, tc.perMinute)
			}
		})
	}
}

// TestPlan_HealthyDoneIsTheHealthyNodesProvisioned: outdated and faulty nodes, and healthy ones
// not provisioned, stay out of the pace.
func TestPlan_HealthyDoneIsTheHealthyNodesProvisioned(t *testing.T) {
	// 30 emulated: 5 faulty, 3 outdated (the first among them), 22 healthy.
	p := newPlan("eu", 0, 30, false)
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	rep := audit.Report{Nodes: map[string]*audit.Node{}}
	var want []time.Time
	for i, id := range p.nodes {
		at := start.Add(time.Duration(i) * time.Second)
		provisioned := i != 1 // the second, healthy, is left unprovisioned
		rep.Nodes[id] = &audit.Node{Provisioned: provisioned}
		if provisioned {
			rep.Nodes[id].ProvisionedAt = at
		}
		if provisioned && p.expect[id] == Healthy {
			want = append(want, at)
		}
	}
	got := p.healthyDone(rep)
	if len(got) != 21 || !slices.Equal(got, want) {
		t.Fatalf("healthyDone = %v, want the 21 healthy nodes provisioned: %v", got, want)
	}
}
