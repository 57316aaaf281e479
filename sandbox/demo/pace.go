// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"slices"
	"time"

	"github.com/seed96588659/muster/sandbox/fleet/audit"
)

// Percentiles of the healthy nodes' completion times between which Pace measures the steady
// rate: the first and last few are the ramp-up and the stragglers, not the pace.
const (
	steadyLow  = 5
	steadyHigh = 95
)

// Pace is how fast the healthy nodes were provisioned, apart from the faulty and outdated ones
// whose retries, upgrades and restarts make up most of a run's wall clock.
type Pace struct {
	// Nodes is how many healthy nodes ended provisioned.
	Nodes int
	// Took runs from the start to the last of them.
	Took time.Duration
	// SteadyFrom and SteadyTo are the steadyLow and steadyHigh percentiles (nearest rank) of
	// their completion times, from the start; both zero when the nodes give no span.
	SteadyFrom, SteadyTo time.Duration
	// SteadyNodes is how many completed after SteadyFrom up to SteadyTo.
	SteadyNodes int
}

// SteadyPerMinute is SteadyNodes over the span from SteadyFrom to SteadyTo; 0 without a span.
func (p Pace) SteadyPerMinute() float64 {
	span := p.SteadyTo - p.SteadyFrom
	if span <= 0 {
		return 0
	}
	return float64(p.SteadyNodes) / span.Minutes()
}

// paceOf measures the healthy nodes completed at done (in any order) from start.
func paceOf(start time.Time, done []time.Time) Pace {
	if len(done) == 0 {
		return Pace{}
	}
	at := make([]time.Duration, len(done))
	for i, t := range done {
		at[i] = t.Sub(start)
	}
	slices.Sort(at)
	p := Pace{Nodes: len(at), Took: at[len(at)-1]}
	lo, hi := nearestRank(steadyLow, len(at)), nearestRank(steadyHigh, len(at))
	if hi > lo && at[hi] > at[lo] {
		p.SteadyFrom, p.SteadyTo, p.SteadyNodes = at[lo], at[hi], hi-lo
	}
	return p
}

// nearestRank is the index of the pct-th percentile of n sorted values: the smallest value
// with at least pct percent of them at or below it.
func nearestRank(pct, n int) int {
	return max(0, (pct*n+99)/100-1)
}

// healthyDone is when each of the plan's healthy nodes the report shows provisioned was.
func (p *plan) healthyDone(rep audit.Report) []time.Time {
	var done []time.Time
	for _, id := range p.nodes {
		if n := rep.Nodes[id]; p.expect[id] == Healthy && n != nil && n.Provisioned {
			done = append(done, n.ProvisionedAt)
		}
	}
	return done
}
