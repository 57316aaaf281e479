// SPDX-License-Identifier: Apache-2.0

package edge

import (
	"context"
	"time"

	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/api"
)

// reportTimeout bounds one report call; reports outlive Run's context so that results of flows
// that ended during shutdown still reach the source.
const reportTimeout = 10 * time.Second

// reporter batches results per lease and hands them to the source, after sending unanswered
// restarts, upgrades and shutdowns through the confirmer.
type reporter struct {
	e        *Edge
	in       <-chan leased
	confirm  *confirmer
	pending  map[*lease.Held][]api.NodeResult
	count    int
	maxBatch int
}

func newReporter(e *Edge, in <-chan leased) *reporter {
	return &reporter{e: e, in: in, confirm: newConfirmer(e), pending: map[*lease.Held][]api.NodeResult{}, maxBatch: 256}
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
			r.flush()
		case <-done:
			done = nil
			for len(r.confirm.out) > 0 {
				r.add(<-r.confirm.out)
			}
		}
	}
	r.flush()
}

func (r *reporter) add(res leased) {
	e := r.e
	e.stats.outcomes[res.Outcome].Add(1)
	e.m.results.WithLabelValues(res.Outcome.String()).Inc()
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
	r.pending[res.lease] = append(r.pending[res.lease], res.API())
	r.count++
	if r.count >= r.maxBatch {
		r.flush()
	}
}

func (r *reporter) flush() {
	for held, results := range r.pending {
		ctx, cancel := context.WithTimeout(context.Background(), reportTimeout)
		resp, err := r.e.o.Source.Report(ctx, held.Lease(), results)
		cancel()
		switch {
		case err != nil:
			r.e.log.Error("could not report results", "lease", held.Lease().ID, "results", len(results), "error", err)
		case len(resp.Rejected) > 0:
			for _, rj := range resp.Rejected {
				r.e.log.Warn("result refused by the lease source", "lease", held.Lease().ID, "node", rj.Identity, "reason", rj.Reason)
			}
		}
		delete(r.pending, held)
	}
	r.count = 0
}
