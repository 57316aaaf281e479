// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"time"

	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/api"
)

// Results ride the next acquire, as edge/carry.go has them: an edge whose leader said it takes
// reports with an acquire (AcquireResponse.CarriesReports) parks a result up to lease.ParkFor
// for its next acquire, which carries it (and then does not long-poll). A result still parked
// after it, or carried by an acquire that failed or whose answer does not say what became of it,
// is sent alone under the request id it got when it was made: the ledger applies it once however
// often it is sent. The seed makes about half the edges carry, so both paths run.

// delivery is one report on its way: its request, and so its request id, is fixed before the
// first try, carried or alone (lease.Delivery).
type delivery struct {
	l    api.Lease
	held *lease.Held // settled once the report was answered or given up
	req  api.ReportRequest
}

// park holds d for the next acquire (lease.Outbox, as the real edge's); it goes alone after
// lease.ParkFor.
func (e *edge) park(d *delivery) {
	e.parked.Park(time.Unix(0, e.s.now), d, len(d.req.Results))
	e.s.tracef(d.tags(), e.who(), "parks report %s for its next acquire", d.req.RequestID)
	e.after(lease.ParkFor, e.unpark)
}

// unpark sends alone every report parked lease.ParkFor ago or earlier.
func (e *edge) unpark() {
	for _, d := range e.parked.Due(time.Unix(0, e.s.now-int64(lease.ParkFor))) {
		e.s.tracef(d.tags(), e.who(), "report %s waited %s for an acquire: sends it alone", d.req.RequestID, lease.ParkFor)
		e.deliver(d)
	}
}

// takeParked hands an acquire the parked reports it carries (lease.Outbox.Take).
func (e *edge) takeParked() []*delivery { return e.parked.Take() }

// carriedRequests are the reports an acquire carries, in order.
func carriedRequests(ds []*delivery) []api.ReportRequest {
	if len(ds) == 0 {
		return nil
	}
	out := make([]api.ReportRequest, len(ds))
	for i, d := range ds {
		out[i] = d.req
	}
	return out
}

// settleCarried takes the answers of an acquire's carried reports (nil when the acquire failed),
// made at seen, matched as the real source matches them (lease.Answers): each one left
// unanswered is sent alone under its request id, as the real edge's outbox does.
func (e *edge) settleCarried(ds []*delivery, answers []api.ReportAnswer, seen logPos) {
	for i, ans := range lease.Answers(carriedRequests(ds), answers) {
		d := ds[i]
		if !ans.Answered {
			e.s.tracef(d.tags(), e.who(), "report %s carried without an answer: sends it alone", d.req.RequestID)
			e.deliver(d)
			continue
		}
		if ans.Err == nil {
			e.s.stats.Carried++
		}
		e.reported(d, ans.Response, ans.Err, seen)
	}
}

// tags are the trace subjects of d: its lease, edge and nodes.
func (d *delivery) tags() []string { return append(leaseTags(d.l), ids(d.req.Results)...) }
