// SPDX-License-Identifier: Apache-2.0

package edge

import (
	"time"

	"github.com/seed96588659/muster/edge/lease"
)

// A complete lease's results, and those of a lease that waited reportDelay for the rest of it,
// ride the dispatcher's next acquire when the source takes them (lease.Carrier): the edge asks
// for its next lease as its workers free up, and one call and one log entry on every member
// carry both, where a report and an acquire were two of each. Results are parked for that
// acquire up to lease.ParkFor; the reporter sends them alone after that, or when the edge stops. The
// parked results get their request id when parked, so a carried try and a lone one are the same
// report to the ledger, which applies it once: an acquire that failed leaves its reports to be
// sent alone.

// parkedBatch is a lease's results waiting for an acquire to carry them (lease.Outbox).
type parkedBatch struct {
	held *lease.Held
	b    *batch
}

// sendOrPark parks a lease's results for the next acquire, or sends them now when the source
// does not take them with an acquire or the edge is stopping. A replayed intent's results (a
// lease listing no nodes) go alone too: its lease may name an edge or region that this run's
// acquires do not, and an acquire carries only its own edge's and region's reports.
func (r *reporter) sendOrPark(held *lease.Held, b *batch) {
	if r.carrier == nil || !r.carrier.Carries() || r.e.stopping.Load() || len(held.Lease().Nodes) == 0 {
		r.send(held, b)
		return
	}
	delete(r.pending, held)
	r.count -= len(b.results)
	d := lease.NewDelivery(held.Lease(), b.results)
	b.delivery = &d
	r.parkMu.Lock()
	r.parked.Park(r.e.o.Now(), parkedBatch{held: held, b: b}, len(b.results))
	r.parkMu.Unlock()
}

// unpark sends alone every lease parked at or before cutoff (all of them for the zero time).
func (r *reporter) unpark(cutoff time.Time) {
	r.parkMu.Lock()
	late := r.parked.Due(cutoff)
	r.parkMu.Unlock()
	for _, p := range late {
		r.deliver(p.held, p.b)
	}
}

// takeParked hands the dispatcher the parked leases an acquire may carry (lease.Outbox.Take).
// They count as in flight until settled.
func (r *reporter) takeParked() []parkedBatch {
	if r.carrier == nil {
		return nil
	}
	r.parkMu.Lock()
	defer r.parkMu.Unlock()
	taken := r.parked.Take()
	r.inFlight.Add(len(taken))
	return taken
}

// deliveries are the parked leases' deliveries, in order.
func deliveries(ps []parkedBatch) []lease.Delivery {
	out := make([]lease.Delivery, len(ps))
	for i, p := range ps {
		out[i] = *p.b.delivery
	}
	return out
}

// settleCarried records the answers to the leases an acquire carried; each one the acquire did
// not answer (it failed, or the source did not say) is sent alone under its request id.
func (r *reporter) settleCarried(ps []parkedBatch, answers []lease.Delivered, err error) {
	for i, p := range ps {
		if err != nil || i >= len(answers) || !answers[i].Answered {
			r.deliver(p.held, p.b)
		} else {
			r.settle(p.held, p.b, answers[i].Response, answers[i].Err)
		}
		r.inFlight.Done() // taken by takeParked
	}
}
