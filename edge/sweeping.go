// SPDX-License-Identifier: Apache-2.0

package edge

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/edge/register"
)

// discover sweeps at once, then every interval and whenever provisioning resumes. Like
// choria-provisioner it skips sweeps while paused.
func (e *Edge) discover(ctx context.Context, found chan<- register.Found) {
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

func (e *Edge) sweep(ctx context.Context, found chan<- register.Found) {
	e.m.o.DiscoverCycles.WithLabelValues(e.o.Site).Inc()
	start := e.o.Now()
	ids, err := e.o.Finder.Sweep(ctx)
	var cut SweepCut
	switch {
	case err != nil && ctx.Err() != nil:
		return
	case errors.As(err, &cut):
		e.m.sweepsCut.Inc()
		e.log.Warn("discovery sweep ended at its bound of identities; the rest wait for the next sweep", "limit", cut.SweepCut())
	case err != nil:
		e.m.o.DiscoveryErrors.WithLabelValues(e.o.Site).Inc()
		e.log.Error("could not discover nodes", "error", err)
	}
	end := e.o.Now()
	e.log.Info("discovery sweep", "found", len(ids), "took", end.Sub(start).Round(time.Millisecond))
	// In identity order, as the ledger keys its nodes: the nodes of one registration then wait
	// side by side, each lease is granted neighbours, and every grant and report of it rewrites
	// a few pages of the ledger's node index on every member instead of a page per node
	// (replies arrive in any order, and a lease of scattered nodes touched one page each).
	ids = slices.Sorted(slices.Values(ids))
	known, fresh := e.newNodes.split(ids)
	// Seen by the sweep's end: its replies come within it, and a sweep's start would make every
	// sighting of a long sweep (a large fleet) stale before its first register. Known nodes go
	// first: new ones wait for their check.
	for _, id := range known {
		select {
		case found <- register.Found{Identity: id, At: end, Since: start}:
		case <-ctx.Done():
			return
		}
	}
	e.newNodes.check(ctx, e.newNodes.admitSweep(fresh), func(id string, asked time.Time) {
		f := register.Found{Identity: id, At: end, Since: start, FirstSeen: true}
		if !asked.IsZero() {
			f = e.newNodes.checked(id, false, asked)
		}
		select {
		case found <- f:
		case <-ctx.Done():
		}
	})
	e.logNewNodes()
}

// startupOfNew takes a startup event of an identity this edge has not seen answer: within the
// edge's rate it is checked in the background and registered once it answers.
func (e *Edge) startupOfNew(ctx context.Context, id string, found chan<- register.Found) {
	if !e.newNodes.admitEvent() {
		return
	}
	e.newNodes.start(ctx, id, &e.checking, func(id string, asked time.Time) {
		f := e.newNodes.checked(id, true, asked)
		if asked.IsZero() {
			// As a known node's event: it may have waited in the socket while the edge was stopped.
			now := e.o.Now()
			f = register.Found{Identity: id, Event: true, At: now, Since: now.Add(-e.o.RegisterFresh), FirstSeen: true}
		}
		select {
		case found <- f:
		case <-ctx.Done():
		}
	})
}

// logNewNodes says, once per sweep, how many new identities were refused since the last sweep
// and why; each is counted in muster_edge_new_nodes_total.
func (e *Edge) logNewNodes() {
	s := e.newNodes.summary()
	if n := s[newUnanswered]; n > 0 {
		e.log.Warn("new nodes did not answer their check: not registered", "nodes", n)
	}
	if n := s[newCheckFailed]; n > 0 {
		e.log.Warn("could not check new nodes: not registered, the next sweep tries again", "nodes", n)
	}
	if n := s[newSweepLimit]; n > 0 {
		e.log.Warn("more new nodes than one sweep takes in: the rest wait for a later sweep", "nodes", n, "new_nodes_per_sweep", e.o.NewPerSweep)
	}
	if n := s[newRateLimit]; n > 0 {
		e.log.Warn("new nodes beyond the edge's rate: not registered, a later sweep finds them", "nodes", n, "new_nodes_rate", e.o.NewRate)
	}
}

// register hands found nodes to the lease source in batches: a sweep of 10,000 nodes becomes a
// few calls, and an event is registered within a few milliseconds. Up to registerCalls batches
// are in flight at once: one after another, a sweep's last batches waited for every earlier
// batch's round trip and commit, and a coordinator a datacenter away saw them arrive after
// RegisterFresh, dropped.
func (e *Edge) register(ctx context.Context, found <-chan register.Found) {
	const maxBatch, registerCalls = 1000, 4
	batch := make([]register.Found, 0, maxBatch)
	calls := make(chan struct{}, registerCalls)
	registerAll := func(batch []register.Found, event bool) {
		batch, oldest := e.fresh(batch)
		if len(batch) == 0 {
			return
		}
		ids := make([]string, 0, len(batch))
		for _, f := range batch {
			ids = append(ids, f.Identity)
		}
		e.noteSeen(ids)
		// Given up once its oldest sighting is too old: delivered later, it could queue again a
		// node provisioned meanwhile.
		rctx, cancel := context.WithTimeout(ctx, e.o.RegisterFresh-e.o.Now().Sub(oldest))
		added, err := e.o.Mode.source.Register(rctx, batch)
		cancel()
		switch {
		case err != nil && ctx.Err() == nil:
			e.m.o.DiscoveryErrors.WithLabelValues(e.o.Site).Inc()
			// A refused credential was said once by the source, with its remedy.
			if !errors.Is(err, lease.ErrCredentialRefused) {
				e.log.Error("could not register discovered nodes; looking again soon", "nodes", len(batch), "error", err)
			}
			e.resweepSoon()
		case event:
			e.m.o.EventDiscovered.WithLabelValues(e.o.Site).Add(float64(added))
		default:
			e.m.o.Discovered.WithLabelValues(e.o.Site).Add(float64(added))
		}
		e.stats.discovered.Add(int64(added))
	}
	// start registers found in a call of its own once fewer than registerCalls are in flight;
	// false when ctx ended first.
	start := func(found []register.Found, event bool) bool {
		if len(found) == 0 {
			return true
		}
		select {
		case calls <- struct{}{}:
		case <-ctx.Done():
			return false
		}
		go func() {
			defer func() { <-calls }()
			registerAll(found, event)
		}()
		return true
	}
	// Sweeps and events have a counter each, as in choria-provisioner, so they register apart.
	flush := func() {
		var swept, events []register.Found
		for _, f := range batch {
			if f.Event {
				events = append(events, f)
			} else {
				swept = append(swept, f)
			}
		}
		batch = batch[:0]
		if start(swept, false) {
			start(events, true)
		}
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

// fresh drops the sightings older than RegisterFresh and those the edge may have been stopped
// after, and has discovery look again soon for what they named; it returns the rest and the oldest
// sighting's time. A sighting without a time (a source of the edge's own) counts as now.
func (e *Edge) fresh(batch []register.Found) ([]register.Found, time.Time) {
	now := e.o.Now()
	oldest := now
	stalled := e.stalls.lastEnd()
	kept := batch[:0]
	var old, acrossStall int
	for _, f := range batch {
		if f.At.IsZero() {
			f.At = now
		}
		if f.Since.IsZero() {
			f.Since = f.At
		}
		switch {
		case now.Sub(f.At) > e.o.RegisterFresh:
			old++
		case stalled.After(f.Since):
			acrossStall++
		default:
			oldest = minTime(oldest, f.At)
			kept = append(kept, f)
		}
	}
	if old > 0 {
		e.log.Warn("dropped sightings too old to register; looking again soon", "nodes", old, "fresh", e.o.RegisterFresh)
	}
	if acrossStall > 0 {
		e.log.Warn("dropped sightings made before this edge was stopped (its clock jumped); looking again soon", "nodes", acrossStall)
	}
	if old+acrossStall > 0 {
		e.resweepSoon()
	}
	return kept, oldest
}

// resweepSoon runs a discovery sweep RegisterFresh from now, once however often it is asked
// meanwhile: what a dropped or undelivered sighting named is seen afresh, and a coordinator
// still out of reach is not swept for at every batch. It is false when a sweep was already due.
func (e *Edge) resweepSoon() bool {
	if e.resweep.Swap(true) {
		return false
	}
	time.AfterFunc(e.o.RegisterFresh, func() {
		e.resweep.Store(false)
		e.wakeDiscovery()
	})
	return true
}

// eventNotTaken handles a startup event the Finder could not take. Events dropped unread (too
// large, or a flood while registering lags) are counted, and a sweep soon finds their nodes,
// which are still in provisioning mode; one line is logged per sweep that follows.
func (e *Edge) eventNotTaken(err error) {
	var dropped DroppedEvents
	if !errors.As(err, &dropped) {
		e.log.Warn("could not handle lifecycle event", "error", err)
		return
	}
	reason, n := dropped.DroppedEvents()
	e.m.eventsDropped.WithLabelValues(reason).Add(float64(n))
	if e.resweepSoon() {
		e.log.Warn("startup events dropped unread; a sweep looks for their nodes soon", "reason", reason, "events", n, "sweep_in", e.o.RegisterFresh)
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
