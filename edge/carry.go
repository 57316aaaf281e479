// SPDX-License-Identifier: Apache-2.0

package edge

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/api"
)

// A complete lease's results, and those of a lease that waited lease.BatchFor for the rest of
// it, ride the dispatcher's next acquire when the source takes them (Cluster mode): the edge
// asks for its next lease as its workers free up, and one call and one log entry on every
// member carry both, where a report and an acquire were two of each. Results are parked for
// that acquire up to lease.ParkFor and sent alone after that, or when the edge stops. The
// parked results get their request id when parked, so a carried try and a lone one are the same
// report to the ledger, which applies it once: an acquire that failed leaves its reports to be
// sent alone.

// reportTimeout bounds one report: while the coordinators are out of reach the report is tried
// again (the same request id, so never applied twice) for as long as a result can still matter,
// the node's lock window. Reports outlive Run's context so that results of flows that ended
// during shutdown still reach the source, but by stopGrace at most once Run's context ended.
const (
	reportTimeout = 2 * time.Minute
	stopGrace     = 10 * time.Second
)

// outbox is where the reporter's due batches wait until they are delivered: parked for the
// dispatcher's next acquire, or sent alone. The reporter only puts into it and the dispatcher
// only takes from it; whoever got a batch's answer settles it here.
type outbox struct {
	source   lease.Source
	carrier  lease.Carrier // nil: acquires carry nothing (Standalone)
	journal  Journal       // nil: no journal
	now      func() time.Time
	stopping func() bool            // Run's context ended: nothing more is parked
	reported *prometheus.CounterVec // results by what became of them
	log      *slog.Logger

	ctx      context.Context // every report's; ends stopGrace after Run's context
	inFlight sync.WaitGroup  // reports being delivered, taken ones included

	mu     sync.Mutex
	parked lease.Outbox[parcel]
}

// parcel is one lease's results on their way to the source.
type parcel struct {
	held    *lease.Held
	run     *leaseRun // nil for a result reported under an ended lease
	results []api.NodeResult
	// delivery, once the parcel was parked for an acquire to carry, is its request id: every
	// later try, carried or alone, sends it under that id.
	delivery *lease.Delivery
}

// put parks each batch for the next acquire, or sends it now when the source does not take
// reports with an acquire, the edge is stopping or the batch must go alone.
func (o *outbox) put(due []lease.Batch[leased]) {
	for _, b := range due {
		p := parcel{held: b.Held, results: make([]api.NodeResult, len(b.Results))}
		for i, res := range b.Results {
			p.results[i], p.run = res.API(), res.run
		}
		if b.Alone || o.carrier == nil || !o.carrier.Carries() || o.stopping() {
			o.send(p)
			continue
		}
		d := lease.NewDelivery(p.held.Lease(), p.results)
		p.delivery = &d
		o.mu.Lock()
		o.parked.Park(o.now(), p, len(p.results))
		o.mu.Unlock()
	}
}

// unpark sends alone every parcel parked at or before cutoff (all of them for the zero time).
func (o *outbox) unpark(cutoff time.Time) {
	o.mu.Lock()
	late := o.parked.Due(cutoff)
	o.mu.Unlock()
	for _, p := range late {
		o.send(p)
	}
}

// take hands the dispatcher the parcels an acquire may carry (lease.Outbox.Take). They count as
// in flight until settled.
func (o *outbox) take() []parcel {
	if o.carrier == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	taken := o.parked.Take()
	o.inFlight.Add(len(taken))
	return taken
}

// deliveries are the parcels' deliveries, in order.
func deliveries(ps []parcel) []lease.Delivery {
	out := make([]lease.Delivery, len(ps))
	for i, p := range ps {
		out[i] = *p.delivery
	}
	return out
}

// carried settles the parcels an acquire carried; each one the acquire did not answer (it
// failed, or the source did not say) is sent alone under its request id.
func (o *outbox) carried(ps []parcel, answers []lease.Delivered, err error) {
	for i, p := range ps {
		if err != nil || i >= len(answers) || !answers[i].Answered {
			o.send(p)
		} else {
			o.settle(p, answers[i].Response, answers[i].Err)
		}
		o.inFlight.Done() // taken by take
	}
}

// send reports one parcel alone in a goroutine of its own, counted in flight: each is a round
// trip to the coordinator's leader, and a failover or a partition may hold one for a long time,
// which must not hold the results of other leases.
func (o *outbox) send(p parcel) {
	o.inFlight.Add(1)
	go func() {
		defer o.inFlight.Done()
		ctx, cancel := context.WithTimeout(o.ctx, reportTimeout)
		defer cancel()
		var resp api.ReportResponse
		var err error
		if p.delivery != nil {
			resp, err = o.carrier.Deliver(ctx, *p.delivery)
		} else {
			resp, err = o.source.Report(ctx, p.held.Lease(), p.results)
		}
		o.settle(p, resp, err)
	}()
}

// wait returns once every parcel sent or taken is settled.
func (o *outbox) wait() { o.inFlight.Wait() }

// settle records the source's answer to one parcel. Nothing is dropped silently: results the
// source refused (stale lease or token) and results it could not take are logged and counted.
func (o *outbox) settle(p parcel, resp api.ReportResponse, err error) {
	defer func() {
		if p.run != nil {
			p.run.settled(p.held, len(p.results))
		}
	}()
	l := p.held.Lease()
	if o.journal != nil && lease.Ends(err) {
		// Answered: applied, or refused for good. An undelivered report keeps its intents open
		// for the next run to settle.
		for _, res := range p.results {
			o.journal.End(res.Identity, l.ID)
		}
	}
	switch {
	case err != nil && lease.Stale(err):
		o.reported.WithLabelValues("rejected").Add(float64(len(p.results)))
		o.log.Warn("results refused by the lease source: the lease is no longer this edge's", "lease", l.ID, "token", l.Token, "results", len(p.results), "nodes", lease.Identities(p.results), "error", err)
	case err != nil:
		o.reported.WithLabelValues("failed").Add(float64(len(p.results)))
		o.log.Error("could not report results", "lease", l.ID, "results", len(p.results), "nodes", lease.Identities(p.results), "error", err)
	default:
		o.reported.WithLabelValues("applied").Add(float64(len(resp.Applied)))
		if len(resp.Rejected) > 0 {
			o.reported.WithLabelValues("rejected").Add(float64(len(resp.Rejected)))
		}
		for _, rj := range resp.Rejected {
			o.log.Warn("result refused by the lease source", "lease", l.ID, "node", rj.Identity, "reason", rj.Reason)
		}
	}
}
