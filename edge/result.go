// SPDX-License-Identifier: Apache-2.0

package edge

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/edge/journal"
	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/api"
)

// reportTimeout bounds one report: while the coordinators are out of reach the report is tried
// again (the same request id, so never applied twice) for as long as a result can still matter,
// the node's lock window. Reports outlive Run's context so that results of flows that ended
// during shutdown still reach the source, but by stopGrace at most once Run's context ended.
const (
	reportTimeout = 2 * time.Minute
	stopGrace     = 10 * time.Second
)

// reportDelay is how long a lease's results may wait to be reported with more of its results.
// Every report is a Raft entry written on every member, and a lease's hosts start as workers
// free up and end a flow's time later, so a short delay splits a lease over several reports. A
// second covers a lease's spread, so most leases are reported once, by their last result, which
// goes at once with whatever of its lease waits. Nothing waits on it but the ledger's view of the
// node. (What it measured: docs/performance.md, What changed the figures.)
const reportDelay = time.Second

// reporter batches results per lease and hands them to the source, after sending unanswered
// restarts, upgrades and shutdowns through the confirmer.
type reporter struct {
	e        *Edge
	in       <-chan leased
	confirm  *confirmer
	pending  map[*lease.Held]*batch
	taken    map[*lease.Held]int // results taken so far of each lease not complete yet
	count    int
	maxBatch int

	ctx      context.Context // every report's; ends stopGrace after Run's context
	inFlight sync.WaitGroup  // reports being delivered, parked reports the dispatcher took included

	// carrier is the source when its acquires can carry reports (carry.go), else nil.
	carrier lease.Carrier
	parkMu  sync.Mutex
	parked  lease.Outbox[parkedBatch]
}

func newReporter(ctx context.Context, e *Edge, in <-chan leased) *reporter {
	rctx, cancel := context.WithCancel(context.Background())
	context.AfterFunc(ctx, func() { time.AfterFunc(stopGrace, cancel) })
	r := &reporter{e: e, in: in, confirm: newConfirmer(e), pending: map[*lease.Held]*batch{}, taken: map[*lease.Held]int{}, maxBatch: 256, ctx: rctx}
	r.carrier, _ = e.o.Source.(lease.Carrier)
	return r
}

func (r *reporter) run() {
	go r.confirm.run()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	in, done := r.in, r.confirm.done
	for in != nil || done != nil {
		select {
		case res, ok := <-in:
			if !ok {
				in = nil
				r.confirm.close()
				continue
			}
			if res.Outcome == hostflow.Unknown {
				r.confirm.add(res)
				continue
			}
			r.add(res)
		case res := <-r.confirm.out:
			r.add(res)
		case <-tick.C:
			r.flushOlder(r.e.o.Now().Add(-reportDelay))
			r.unpark(r.e.o.Now().Add(-lease.ParkFor))
		case <-done:
			done = nil
			for len(r.confirm.out) > 0 {
				r.add(<-r.confirm.out)
			}
		}
	}
	r.flush()
	r.unpark(time.Time{})
	r.inFlight.Wait()
}

func (r *reporter) add(res leased) {
	if res.withheld {
		r.withhold(res)
		return
	}
	e := r.e
	e.stats.outcomes[res.Outcome].Add(1)
	e.m.results.WithLabelValues(res.Outcome.String()).Inc()
	if res.Outcome == hostflow.DuplicateResponder {
		e.m.duplicates.WithLabelValues(res.Step).Inc()
	}
	switch {
	case res.Outcome == hostflow.Provisioned:
		e.m.o.Provisioned.WithLabelValues(e.o.Site).Inc()
		e.log.Info("provisioned", "node", res.Identity, "took", res.Took.Round(time.Millisecond))
	case res.Outcome == hostflow.Deferred, res.Outcome == hostflow.Paused:
		// Expected: the helper asked to wait, or the operator paused; the node is tried again.
		e.log.Warn("host flow ended", "node", res.Identity, "outcome", res.Outcome.String(), "reason", res.Err)
	case res.Err != nil:
		e.log.Error("could not provision", "node", res.Identity, "outcome", res.Outcome.String(), "error", res.Err)
	default:
		e.log.Info("host flow ended", "node", res.Identity, "outcome", res.Outcome.String())
	}
	if e.o.OnResult != nil {
		e.o.OnResult(res.Result)
	}
	e.forget(res.Identity)
	b := r.pending[res.lease]
	if b == nil {
		b = &batch{run: res.run, since: e.o.Now()}
		r.pending[res.lease] = b
	}
	b.results = append(b.results, res.API())
	r.count++
	switch {
	case r.count >= r.maxBatch:
		r.took(res.lease)
		r.flush()
	case r.took(res.lease):
		r.sendOrPark(res.lease, b)
	}
}

// took counts one more result of held taken and reports whether that was its last. A replayed
// intent's lease lists no nodes: its results go by age, together.
func (r *reporter) took(held *lease.Held) (complete bool) {
	n := len(held.Lease().Nodes)
	if n == 0 {
		return false
	}
	r.taken[held]++
	if complete = r.taken[held] >= n; complete {
		delete(r.taken, held)
	}
	return complete
}

// withhold lets go of a result the confirmer could not settle (confirm.go): nothing is reported,
// its journal intent stays open, and its lease's other results go as if it had been reported.
func (r *reporter) withhold(res leased) {
	e := r.e
	e.log.Warn("result withheld: the node may have acted on a call that got no reply; settled by rediscovery later, or by the next run from the journal",
		"node", res.Identity, "step", res.Step, "lease", res.lease.Lease().ID, "reason", res.Err)
	e.forget(res.Identity)
	if res.run != nil {
		res.run.done()
	}
	if b := r.pending[res.lease]; r.took(res.lease) && b != nil {
		r.sendOrPark(res.lease, b)
	}
}

// batch is the results of one lease waiting to be reported.
type batch struct {
	run     *leaseRun
	results []api.NodeResult
	since   time.Time // when its first result was taken
	// delivery, once the batch was parked for an acquire to carry, is its request id: every
	// later try, carried or alone, sends it under that id.
	delivery *lease.Delivery
}

// flush hands every lease's pending results to a delivery.
func (r *reporter) flush() {
	for held, b := range r.pending {
		r.send(held, b)
	}
}

// flushOlder hands on the results of every lease whose first pending result was taken before
// cutoff, parked for the next acquire like a finished lease's (sendOrPark): a lease whose hosts
// span more than reportDelay is reported in parts, and a part sent alone is one more entry on
// every member.
func (r *reporter) flushOlder(cutoff time.Time) {
	for held, b := range r.pending {
		if b.since.Before(cutoff) {
			r.sendOrPark(held, b)
		}
	}
}

// send hands one lease's pending results to a delivery of their own: each is a round trip to
// the coordinator's leader, and a failover or a partition may hold one for a long time, which
// must not hold the results of other leases.
func (r *reporter) send(held *lease.Held, b *batch) {
	r.deliver(held, b)
	delete(r.pending, held)
	r.count -= len(b.results)
}

// deliver reports one lease's results in a goroutine of its own, counted in flight.
func (r *reporter) deliver(held *lease.Held, b *batch) {
	r.inFlight.Add(1)
	go func() {
		defer r.inFlight.Done()
		r.report(held, b)
	}()
}

// report delivers one lease's results and settles them.
func (r *reporter) report(held *lease.Held, b *batch) {
	ctx, cancel := context.WithTimeout(r.ctx, reportTimeout)
	defer cancel()
	var resp api.ReportResponse
	var err error
	if b.delivery != nil {
		resp, err = r.carrier.Deliver(ctx, *b.delivery)
	} else {
		resp, err = r.e.o.Source.Report(ctx, held.Lease(), b.results)
	}
	r.settle(held, b, resp, err)
}

// settle records the source's answer to one lease's results. Nothing is dropped silently:
// results the source refused (stale lease or token) and results it could not take are logged
// and counted.
func (r *reporter) settle(held *lease.Held, b *batch, resp api.ReportResponse, err error) {
	e := r.e
	defer func() {
		if b.run != nil {
			for range b.results {
				b.run.done()
			}
		}
	}()
	l := held.Lease()
	if e.o.Journal != nil && (err == nil || lease.Stale(err)) {
		// Answered: applied, or refused for good. An undelivered report keeps its intents open
		// for the next run to settle.
		for _, res := range b.results {
			e.o.Journal.End(res.Identity, l.ID)
		}
	}
	switch {
	case err != nil && lease.Stale(err):
		e.m.reported.WithLabelValues("rejected").Add(float64(len(b.results)))
		e.log.Warn("results refused by the lease source: the lease is no longer this edge's", "lease", l.ID, "token", l.Token, "results", len(b.results), "nodes", lease.Identities(b.results), "error", err)
	case err != nil:
		e.m.reported.WithLabelValues("failed").Add(float64(len(b.results)))
		e.log.Error("could not report results", "lease", l.ID, "results", len(b.results), "nodes", lease.Identities(b.results), "error", err)
	default:
		e.m.reported.WithLabelValues("applied").Add(float64(len(resp.Applied)))
		if len(resp.Rejected) > 0 {
			e.m.reported.WithLabelValues("rejected").Add(float64(len(resp.Rejected)))
		}
		for _, rj := range resp.Rejected {
			e.log.Warn("result refused by the lease source", "lease", l.ID, "node", rj.Identity, "reason", rj.Reason)
		}
	}
}

// endedLease is lease l as a result settled after its hosts ended is reported under: its id,
// token, edge and region, no nodes (so its results go by age) and no renewals.
func (e *Edge) endedLease(l api.Lease) *lease.Held {
	return lease.NewHeld(api.Lease{ID: l.ID, Token: l.Token, Edge: l.Edge, Region: l.Region}, e.o.Now(), 0, e.o.LeaseMargin)
}

// replay hands the intents a previous run left open to the confirmer: each is settled by
// rediscovery once ConfirmAfter has passed since it was recorded, and reported under its own
// lease id and token. The ledger takes a late provisioned or shutdown result from the lease
// that granted the node; upgrade_sent only while that lease still lives (an edge restarted
// within the lease's TTL), and refuses it after, when the lease's expiry already counted it.
func (r *reporter) replay(intents []journal.Intent) {
	// One held lease per lease id, so the intents of one lease are reported in one batch.
	leases := map[string]*lease.Held{}
	for _, in := range intents {
		held := leases[in.Lease]
		if held == nil {
			held = r.e.endedLease(api.Lease{ID: in.Lease, Token: in.Token, Edge: in.Edge, Region: in.Region})
			leases[in.Lease] = held
		}
		res := leased{
			Result: hostflow.Result{Identity: in.Node, Outcome: hostflow.Unknown, Step: in.Step,
				Err: fmt.Errorf("%s was recorded by the edge's previous run and never reported", in.Step)},
			lease:    held,
			replayed: true,
		}
		wait := max(r.e.o.ConfirmAfter-r.e.o.Wall().Sub(in.At), 0)
		r.confirm.addAt(res, r.e.o.Now().Add(wait))
	}
	if len(intents) > 0 {
		r.e.log.Warn("settling calls the previous run sent and never reported", "intents", len(intents))
	}
	if u, ok := r.e.o.Source.(lease.Unsettler); ok {
		nodes := make([]string, len(intents))
		for i, in := range intents {
			nodes[i] = in.Node
		}
		u.Unsettled(nodes...)
	}
}
