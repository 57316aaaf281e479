// SPDX-License-Identifier: Apache-2.0

package edge

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/edge/journal"
	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/api"
)

// A result flows one way: a host's result goes to the reporter, which sends restarts, upgrades
// and shutdowns that got no reply through the confirmer first, tallies the final result and
// batches it per lease (lease.Batches); a due batch goes to the outbox (carry.go), parked for
// the dispatcher's next acquire to carry or sent alone, and whoever got its answer settles it
// there. Nothing goes back: the reporter never hears of an answer, the dispatcher only takes
// from the outbox.

// reporter batches results per lease and hands due batches to the outbox.
type reporter struct {
	in      <-chan leased
	confirm *confirmer
	box     *outbox
	now     func() time.Time
	log     *slog.Logger
	// tally counts and logs a final result (Edge.tally); forget drops discovery's last sighting.
	tally   func(leased)
	forget  func(id string)
	batches lease.Batches[leased]
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
			r.box.put(r.batches.Due(r.now()))
			r.box.unpark(r.now().Add(-lease.ParkFor))
		case <-done:
			done = nil
			for len(r.confirm.out) > 0 {
				r.add(<-r.confirm.out)
			}
		}
	}
	r.box.put(r.batches.All())
	r.box.unpark(time.Time{})
	r.box.wait()
}

func (r *reporter) add(res leased) {
	if res.withheld {
		r.withhold(res)
		return
	}
	r.tally(res)
	r.box.put(r.batches.Add(r.now(), res.lease, res))
}

// withhold lets go of a result the confirmer could not settle (confirm.go): nothing is reported,
// its journal intent stays open, and its lease's other results go as if it had been reported.
func (r *reporter) withhold(res leased) {
	r.log.Warn("result withheld: the node may have acted on a call that got no reply; settled by rediscovery later, or by the next run from the journal",
		"node", res.Identity, "step", res.Step, "lease", res.lease.Lease().ID, "reason", res.Err)
	r.forget(res.Identity)
	if res.run != nil {
		res.run.settled(res.lease, 1)
	}
	r.box.put(r.batches.Withhold(res.lease))
}

// tally counts and logs a final result and forgets when discovery saw its node.
func (e *Edge) tally(res leased) {
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
}

// replay hands the intents a previous run left open to the confirmer: each is settled by
// rediscovery once ConfirmAfter has passed since it was recorded, and reported under its own
// lease id and token. The ledger takes a late provisioned or shutdown result from the lease
// that granted the node; upgrade_sent only while that lease still lives (an edge restarted
// within the lease's TTL), and refuses it after, when the lease's expiry already counted it.
func (r *reporter) replay(intents []journal.Intent, wall func() time.Time) {
	c := r.confirm
	// One held lease per lease id, so the intents of one lease are reported in one batch.
	leases := map[string]*lease.Held{}
	for _, in := range intents {
		held := leases[in.Lease]
		if held == nil {
			held = lease.Ended(api.Lease{ID: in.Lease, Token: in.Token, Edge: in.Edge, Region: in.Region})
			leases[in.Lease] = held
		}
		res := leased{
			Result: hostflow.Result{Identity: in.Node, Outcome: hostflow.Unknown, Step: in.Step,
				Err: fmt.Errorf("%s was recorded by the edge's previous run and never reported", in.Step)},
			lease:    held,
			replayed: true,
		}
		wait := max(c.after-wall().Sub(in.At), 0)
		c.addAt(res, c.now().Add(wait))
	}
	if len(intents) > 0 {
		r.log.Warn("settling calls the previous run sent and never reported", "intents", len(intents))
	}
	nodes := make([]string, len(intents))
	for i, in := range intents {
		nodes[i] = in.Node
	}
	c.unsettled(nodes...)
}
