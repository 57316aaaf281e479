// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"slices"
	"time"
)

// fault is one kind of failure the simulator injects. Each kind lives in its own file
// (fault_*.go); adding one is writing its constructor and listing it in faultKinds.
type fault struct {
	name string
	// every is the mean time between two occurrences in a seed that injects this kind.
	every time.Duration
	// inject starts one occurrence now and schedules its own end.
	inject func(s *Sim)
}

func faultKinds() []fault {
	return []fault{partitionFault(), sigstopFault(), sigkillFault(), wallStepFault(), stepDownFault(), crashFault(), pauseFault(), lateFault(), operatorFault(),
		wipeFault(), memberFault(), recoverFault()}
}

// FaultNames names every fault kind, for Options.Faults.
func FaultNames() []string {
	var names []string
	for _, f := range faultKinds() {
		names = append(names, f.name)
	}
	return names
}

// startFaults picks the kinds this seed injects, each at its own rate, until the quiet end.
func (s *Sim) startFaults() {
	for _, f := range faultKinds() {
		if only := s.opts.Faults; only != nil && !slices.Contains(only, f.name) || only == nil && !s.chance(0.6) {
			continue
		}
		every := time.Duration(float64(f.every) * pick(s, []float64{0.5, 1, 2}))
		s.faults = append(s.faults, f.name)
		var next func()
		next = func() {
			if s.now >= s.end {
				return
			}
			f.inject(s)
			s.after(s.expo(every), next)
		}
		s.after(s.expo(every), next)
	}
}

// aliveEdge is a random edge that runs and is not stopped, or nil.
func (s *Sim) aliveEdge() *edge {
	var es []*edge
	for _, e := range s.edges {
		if e.alive && e.stoppedUntil <= s.now {
			es = append(es, e)
		}
	}
	if len(es) == 0 {
		return nil
	}
	return pick(s, es)
}

// maxTTL is the longest TTL any member runs with.
func (s *Sim) maxTTL() time.Duration {
	var d time.Duration
	for _, m := range s.members {
		d = max(d, m.cfg.TTL)
	}
	return d
}
