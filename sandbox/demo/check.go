// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"fmt"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/sandbox/fleet/audit"
)

// status is how far the run is from done, judged from the sandbox's action log (what the nodes
// accepted), the edge's result counters (which nodes the edge gave up on) and the coordinators'
// ledger (the final state each node was reported in).
type status struct {
	// Met counts, per expectation, the nodes that reached their expected end.
	Met map[Expect]int
	// Missing names each node or counter still short of its end, and why.
	Missing []string
	// Unexpected names nodes that ended otherwise than planned.
	Unexpected []string
}

// done reports whether every node and counter reached its expected end.
func (s status) done() bool { return len(s.Missing) == 0 }

// evaluate compares the action log and the edge's counters with the plan.
func (p *plan) evaluate(rep audit.Report, snap Snapshot) status {
	st := status{Met: map[Expect]int{}}
	for _, id := range p.nodes {
		e := p.expect[id]
		n := rep.Nodes[id]
		ok, why := reached(e, n)
		if ok {
			st.Met[e]++
		} else {
			st.Missing = append(st.Missing, fmt.Sprintf("%s (%s): %s", id, e, why))
		}
		if e != Healthy && e != Upgrade && e != Flapping && n != nil && n.Provisioned {
			st.Unexpected = append(st.Unexpected, fmt.Sprintf("%s (%s) was provisioned", id, e))
		}
		if e == Flapping && n != nil && n.Actions[audit.Restart] != nil && n.Actions[audit.Restart].OK > flappingCount {
			st.Unexpected = append(st.Unexpected, fmt.Sprintf("%s (%s) was provisioned %d times: the coordinators did not hold it", id, e, n.Actions[audit.Restart].OK))
		}
		if e == Silent && n != nil {
			st.Unexpected = append(st.Unexpected, fmt.Sprintf("%s (%s) answered requests", id, e))
		}
	}
	// The log shows what the nodes did; only the edge knows it gave up on them.
	for _, c := range []struct {
		outcome string
		want    int
	}{
		{"failed", p.count(FailConfigure) + p.count(Duplicate)},
		{"deferred", p.count(Deferred)},
		{"shutdown", p.count(ShutDown)},
	} {
		if got := snap.Outcomes[c.outcome]; got < int64(c.want) {
			st.Missing = append(st.Missing, fmt.Sprintf("edge results %q: %d, want at least %d", c.outcome, got, c.want))
		}
	}
	if snap.InFlight > 0 {
		st.Missing = append(st.Missing, fmt.Sprintf("edge has %d host flows in flight", snap.InFlight))
	}
	return st
}

// evaluateLedger compares the ledger's counts of the plan's region with the plan: every node
// that should be provisioned, shut down or held is, no more, the deferred ones are deferred, and
// no lease is outstanding.
func (p *plan) evaluateLedger(counts map[api.NodeState]int) (missing, unexpected []string) {
	for _, c := range []struct {
		state api.NodeState
		want  int
		exact bool
	}{
		{api.StateProvisioned, p.succeed(), true},
		{api.StateShutdown, p.count(ShutDown), true},
		{api.StateDeferred, p.count(Deferred), false},
		{api.StateHeld, p.count(Duplicate) + p.count(Flapping), true},
	} {
		got := counts[c.state]
		switch {
		case got < c.want:
			missing = append(missing, fmt.Sprintf("ledger %s: %d, want %d", c.state, got, c.want))
		case c.exact && got > c.want:
			unexpected = append(unexpected, fmt.Sprintf("ledger %s: %d, want %d", c.state, got, c.want))
		}
	}
	if n := counts[api.StateLeased]; n > 0 {
		missing = append(missing, fmt.Sprintf("ledger has %d nodes leased", n))
	}
	return missing, unexpected
}

// reached says whether node n (nil: nothing recorded) reached the end e expects, and if not why.
func reached(e Expect, n *audit.Node) (bool, string) {
	accepted := func(action string) int {
		if n == nil || n.Actions[action] == nil {
			return 0
		}
		return n.Actions[action].OK
	}
	refused := func(action string) int {
		if n == nil || n.Actions[action] == nil {
			return 0
		}
		return n.Actions[action].Failed
	}
	switch e {
	case Healthy:
		if n != nil && n.Provisioned {
			return true, ""
		}
		return false, "not provisioned yet"
	case Upgrade:
		switch {
		case accepted(audit.ReleaseUpdate) == 0:
			return false, "no release_update accepted yet"
		case n.Provisioned:
			return true, ""
		}
		return false, "upgraded, not provisioned yet"
	case FailConfigure:
		if refused(audit.Configure) > 0 && !n.Provisioned {
			return true, ""
		}
		return false, "no configure refused yet"
	case Duplicate, Deferred:
		if n != nil && !n.Provisioned && accepted(audit.Configure) == 0 {
			return true, ""
		}
		if n == nil {
			return false, "not contacted yet"
		}
		return false, "configured"
	case ShutDown:
		if accepted(audit.Shutdown) > 0 {
			return true, ""
		}
		return false, "no shutdown accepted yet"
	case Silent:
		return n == nil, "answered requests"
	case Flapping:
		// Provisioned once and once again; its next return is held (the ledger's count says so).
		if got := accepted(audit.Restart); got < flappingCount {
			return false, fmt.Sprintf("provisioned %d of %d times before its hold", got, flappingCount)
		}
		return true, ""
	}
	return false, "unknown expectation"
}
