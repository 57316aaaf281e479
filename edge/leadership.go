// SPDX-License-Identifier: Apache-2.0

package edge

import "context"

// Leadership is an election the edge takes part in (election.Campaign, choria-provisioner's
// own): with one, the edge provisions only while it leads.
type Leadership interface {
	// Campaign takes part until ctx ends, calling changed on every change of leadership.
	Campaign(ctx context.Context, changed func(leading bool)) error
}

// Election states, as Election reports them.
const (
	ElectionLeader    = "leader"
	ElectionCandidate = "candidate"
)

// campaign runs the edge's part in its election until ctx ends. Until it leads, the edge is
// halted like a paused one: no discovery, no leases, hosts read as paused.
func (e *Edge) campaign(ctx context.Context) {
	e.log.Warn("campaigning in the leader election: provisioning waits until this edge leads")
	if err := e.o.Leadership.Campaign(ctx, e.setLeading); err != nil && ctx.Err() == nil {
		e.log.Error("the leader election stopped: this edge provisions nothing until it is restarted", "error", err)
		e.setLeading(false)
	}
}

// setLeading records a change of leadership. Winning sweeps at once; losing halts the edge, and
// its hosts in flight stop at their next attempt boundary, as the operator's pause stops them.
func (e *Edge) setLeading(leading bool) {
	if e.notLeading.Swap(!leading) == !leading {
		return
	}
	if leading {
		e.log.Warn("this edge leads the election: provisioning")
		if !e.showPaused() {
			e.wakeDiscovery()
		}
		return
	}
	e.showPaused()
	if e.stopping.Load() {
		// go-choria's election ends a leader's term as it stops; its key lasts until the TTL.
		e.log.Info("the edge stops and leaves the election; another campaigner leads once the key's TTL has passed")
		return
	}
	e.log.Warn("this edge no longer leads the election: hosts in flight stop at their next attempt boundary, and provisioning waits until it leads again")
}

// Election is "" for an edge without leader election, else ElectionLeader or ElectionCandidate.
func (e *Edge) Election() string {
	switch {
	case e.o.Leadership == nil:
		return ""
	case e.notLeading.Load():
		return ElectionCandidate
	}
	return ElectionLeader
}
