// SPDX-License-Identifier: Apache-2.0

package edge

import (
	"context"
	"time"

	"github.com/seed96588659/muster/edge/lease"
)

// discover sweeps at once, then every interval and whenever provisioning resumes. Like
// choria-provisioner it skips sweeps while paused.
func (e *Edge) discover(ctx context.Context, found chan<- lease.Found) {
	tick := time.NewTicker(e.o.Interval)
	defer tick.Stop()
	for {
		if !e.halted() {
			e.sweep(ctx, found)
		} else {
			e.log.Warn("skipping discovery while paused")
		}
		select {
		case <-tick.C:
		case <-e.resumed:
		case <-ctx.Done():
			return
		}
	}
}

func (e *Edge) sweep(ctx context.Context, found chan<- lease.Found) {
	e.m.o.DiscoverCycles.WithLabelValues(e.o.Site).Inc()
	start := e.o.Now()
	ids, err := e.o.Finder.Sweep(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		e.m.o.DiscoveryErrors.WithLabelValues(e.o.Site).Inc()
		e.log.Error("could not discover nodes", "error", err)
	}
	e.log.Info("discovery sweep", "found", len(ids), "took", e.o.Now().Sub(start).Round(time.Millisecond))
	for _, id := range ids {
		select {
		case found <- lease.Found{Identity: id}:
		case <-ctx.Done():
			return
		}
	}
}

// register hands found nodes to the lease source in batches: a sweep of 10,000 nodes becomes a
// few calls, and an event is registered within a few milliseconds.
func (e *Edge) register(ctx context.Context, found <-chan lease.Found) {
	const maxBatch = 1000
	batch := make([]lease.Found, 0, maxBatch)
	ids := make([]string, 0, maxBatch)
	registerAll := func(batch []lease.Found, event bool) {
		if len(batch) == 0 {
			return
		}
		ids = ids[:0]
		for _, f := range batch {
			ids = append(ids, f.Identity)
		}
		e.noteSeen(ids)
		added, err := e.o.Source.Register(ctx, batch)
		switch {
		case err != nil && ctx.Err() == nil:
			e.m.o.DiscoveryErrors.WithLabelValues(e.o.Site).Inc()
			e.log.Error("could not register discovered nodes", "nodes", len(batch), "error", err)
		case event:
			e.m.o.EventDiscovered.WithLabelValues(e.o.Site).Add(float64(added))
		default:
			e.m.o.Discovered.WithLabelValues(e.o.Site).Add(float64(added))
		}
		e.stats.discovered.Add(int64(added))
	}
	// Sweeps and events have a counter each, as in choria-provisioner, so they register apart.
	var swept, events []lease.Found
	flush := func() {
		swept, events = swept[:0], events[:0]
		for _, f := range batch {
			if f.Event {
				events = append(events, f)
			} else {
				swept = append(swept, f)
			}
		}
		registerAll(swept, false)
		registerAll(events, true)
		batch = batch[:0]
	}
	for {
		select {
		case f := <-found:
			batch = append(batch, f)
			// Take whatever else is already waiting, up to a batch.
			for len(batch) < maxBatch {
				select {
				case f := <-found:
					batch = append(batch, f)
					continue
				default:
				}
				break
			}
			flush()
		case <-ctx.Done():
			return
		}
	}
}
