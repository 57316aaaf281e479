// SPDX-License-Identifier: Apache-2.0

package edge

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/edge/journal"
	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/edge/register"
	"github.com/seed96588659/muster/pkg/api"
)

// Flow runs the host flow for one leased node.
type Flow interface {
	Run(ctx context.Context, h hostflow.Host) hostflow.Result
}

// Finder finds nodes in provisioning mode; discovery.Discoverer is the real one.
type Finder interface {
	// Sweep returns every node that answers a discovery now (only identities, when given).
	Sweep(ctx context.Context, identities ...string) ([]string, error)
	// Listen calls found for every startup event of component until ctx ends, and bad for each
	// it could not take (a DroppedEvents for events dropped unread).
	Listen(ctx context.Context, component string, found func(identity string), bad func(error)) error
}

// DroppedEvents is what a Finder reports to Listen's bad for startup events it dropped unread
// (discovery.DroppedError): their nodes are found by the next sweep.
type DroppedEvents interface {
	error
	DroppedEvents() (reason string, n int)
}

// SweepCut is what a Finder's Sweep returns, with the identities it did take, when it ended at
// its bound of identities (discovery.SweepCutError).
type SweepCut interface {
	error
	SweepCut() (limit int)
}

// Reconnecter is a Finder that says when its broker connection came back, e.g. after a broker
// restart dropped the startup events published meanwhile.
type Reconnecter interface {
	OnReconnect(f func())
}

// Journal makes calls that take a node out of provisioning mode durable before they are sent
// (journal.Journal).
type Journal interface {
	// Begin returns once the intent is durable.
	Begin(ctx context.Context, in journal.Intent) error
	// End closes the intent of node under lease.
	End(node, lease string)
}

// Edge discovers, leases and provisions the nodes of one region.
type Edge struct {
	o   Options
	m   *edgeMetrics
	log *slog.Logger

	stopping      atomic.Bool     // Run's context ended: hosts in flight stop at their next boundary
	paused        atomic.Bool     // the operator's pause through this edge's own endpoint
	journalBroken atomic.Bool     // a journal write failed: nothing more may be sent that needs it
	clusterPaused atomic.Bool     // the coordinator's replicated pause, as pauseFlag holds it
	notLeading    atomic.Bool     // the edge campaigns (Options.Leadership) and does not lead
	pauseMu       sync.Mutex      // guards pauseFlag
	pauseFlag     lease.PauseFlag // the coordinator's pause, from its newest answer
	resumed       chan struct{}   // a discovery sweep is due because provisioning resumed
	resweep       atomic.Bool     // a sweep is scheduled to look again for sightings not registered
	stalls        *stallWatch     // when the process was last stopped: sightings across it are dropped
	gaugeMu       sync.Mutex      // orders the paused gauge's updates: the last one sees the latest state

	mu   sync.Mutex
	seen map[string]time.Time // last time discovery saw each node not yet reported

	newNodes *newNodes      // what identities new to this edge go through before register
	checking sync.WaitGroup // checks of new identities from startup events

	stats stats
	ready atomic.Bool
}

// New checks the options (start from DefaultOptions) and builds an Edge.
func New(o Options) (*Edge, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	m, err := newEdgeMetrics(o.Metrics, o.Site)
	if err != nil {
		return nil, fmt.Errorf("edge metrics: %w", err)
	}
	e := &Edge{
		o:       o,
		m:       m,
		log:     o.Logger,
		resumed: make(chan struct{}, 1),
		seen:    make(map[string]time.Time),
		stalls:  newStallWatch(o.Now),
	}
	e.newNodes = newNewNodes(&e.o, m.newNodes)
	if o.Leadership != nil {
		e.notLeading.Store(true)
		e.showPaused()
	}
	return e, nil
}

// Run provisions until ctx ends; it returns after every host flow it started has ended and
// their results were reported.
func (e *Edge) Run(ctx context.Context) error {
	e.log.Info("edge starting", "site", e.o.Site, "region", e.o.Region, "edge", e.o.Name, "workers", e.o.Workers, "interval", e.o.Interval)
	found := make(chan register.Found, 4096)
	results := make(chan leased, e.o.Workers)
	reported := make(chan struct{})

	if err := e.o.Finder.Listen(ctx, e.o.LifecycleComponent, func(id string) {
		if e.halted() {
			return
		}
		if !e.newNodes.known.has(id) {
			e.startupOfNew(ctx, id, found)
			return
		}
		// An event may have waited in the socket while the edge was stopped: it counts as
		// possibly RegisterFresh older than its reading, so one read just after a stop is dropped.
		now := e.o.Now()
		select {
		case found <- register.Found{Identity: id, Event: true, At: now, Since: now.Add(-e.o.RegisterFresh)}:
		case <-ctx.Done():
		}
	}, e.eventNotTaken); err != nil {
		return fmt.Errorf("edge: listen for startup events: %w", err)
	}

	if rc, ok := e.o.Finder.(Reconnecter); ok {
		rc.OnReconnect(func() {
			e.log.Warn("discovery connection back after a broker outage: sweeping now")
			e.wakeDiscovery()
		})
	}
	var wg sync.WaitGroup
	if e.o.Leadership != nil {
		wg.Add(1)
		go func() { defer wg.Done(); e.campaign(ctx) }()
	}
	wg.Add(4)
	go func() { defer wg.Done(); e.o.Mode.watchPause(ctx, e.setClusterPaused) }()
	go func() { defer wg.Done(); e.stalls.run(ctx) }()
	go func() { defer wg.Done(); e.register(ctx, found) }()
	go func() { defer wg.Done(); e.discover(ctx, found) }()

	// Hosts in flight outlive ctx by DrainGrace: once it ends each stops at its next attempt
	// boundary (its pause source reads true) and is given back, and a call waiting for its reply
	// may still get it. Cancelling them with ctx failed every call in flight, an attempt counted
	// against each node, at every restart of an edge. Their leases are renewed meanwhile.
	flows, cancelFlows := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelFlows()
	stopDrain := context.AfterFunc(ctx, func() {
		e.stopping.Store(true)
		t := time.AfterFunc(e.o.DrainGrace, cancelFlows)
		context.AfterFunc(flows, func() { t.Stop() })
	})
	defer stopDrain()

	box := e.newOutbox(flows)
	r := &reporter{in: results, box: box, now: e.o.Now, log: e.log, tally: e.tally, forget: e.forget,
		confirm: newConfirmer(confirmDeps{finder: e.o.Finder, now: e.o.Now, after: e.o.ConfirmAfter,
			confirms: e.m.confirms, unsettled: e.o.Mode.unsettled})}
	r.replay(e.o.Replay, e.o.Wall)
	go func() { r.run(); close(reported) }()

	e.ready.Store(true)
	e.dispatch(ctx, flows, results, box) // returns once every host flow it started has ended
	cancelFlows()
	close(results)
	<-reported
	wg.Wait()
	e.checking.Wait()
	e.ready.Store(false)
	e.log.Info("edge stopped")
	return nil
}

// newOutbox is the outbox of a Run whose host flows run under flows: its reports outlive Run's
// context by stopGrace at most.
func (e *Edge) newOutbox(flows context.Context) *outbox {
	rctx, cancel := context.WithCancel(context.Background())
	context.AfterFunc(flows, func() { time.AfterFunc(stopGrace, cancel) })
	return &outbox{source: e.o.Mode.source, carrier: e.o.Mode.carrier(), journal: e.o.Journal, now: e.o.Now, stopping: e.stopping.Load,
		reported: e.m.reported, log: e.log, ctx: rctx}
}

// Ready is true while Run is past its start-up (startup events subscribed) and its journal, if
// it has one, still takes intents.
func (e *Edge) Ready() bool { return e.ready.Load() && !e.journalBroken.Load() }

// Pause makes every host read as paused at its next attempt boundary and stops discovery and
// new leases until Resume.
func (e *Edge) Pause() {
	if !e.paused.Swap(true) {
		e.log.Warn("provisioning paused")
	}
	e.showPaused()
}

// setClusterPaused records the coordinator's pause flag from an answer, read at at; a flag read
// before the one held is dropped (lease.PauseFlag).
func (e *Edge) setClusterPaused(p bool, at api.PauseMark) {
	e.pauseMu.Lock()
	_, changed := e.pauseFlag.Take(p, at)
	e.clusterPaused.Store(e.pauseFlag.Paused())
	e.pauseMu.Unlock()
	if !changed {
		return
	}
	if p {
		e.log.Warn("provisioning paused by the coordinator")
		e.showPaused()
		return
	}
	e.log.Warn("provisioning resumed by the coordinator")
	if !e.showPaused() {
		e.wakeDiscovery()
	}
}

// ClusterPaused is the coordinator's pause as the edge last learnt it (always false standalone).
func (e *Edge) ClusterPaused() bool { return e.clusterPaused.Load() }

// halted is true while a pause holds, the edge campaigns and does not lead, or the journal is
// broken: no discovery, no new leases, hosts read as paused.
func (e *Edge) halted() bool {
	return e.paused.Load() || e.clusterPaused.Load() || e.notLeading.Load() || e.journalBroken.Load()
}

// showPaused sets the paused gauge from what halts the edge now and returns it. Every change of
// a pause or the journal is followed by a call, and the calls are serialised, so the last one
// reads the latest state: lifting one pause cannot clear the gauge while another, or a broken
// journal, still halts the edge.
func (e *Edge) showPaused() (halted bool) {
	e.gaugeMu.Lock()
	defer e.gaugeMu.Unlock()
	halted = e.halted()
	if halted {
		e.m.paused.Set(1)
	} else {
		e.m.paused.Set(0)
	}
	return halted
}

// breakJournal halts the edge for good once its journal refused an intent: every host would
// otherwise stop before its restart, after its configure, and spend the node's attempts. The
// hosts in flight stop at their next attempt boundary and are given back; /readyz fails so an
// orchestrator replaces the edge.
func (e *Edge) breakJournal(err error) {
	e.m.journalFailures.Inc()
	if e.journalBroken.Swap(true) {
		return
	}
	e.showPaused()
	e.log.Error("the journal refused an intent: this edge takes no more leases until it is restarted with a working state_dir", "error", err)
}

func (e *Edge) wakeDiscovery() {
	select {
	case e.resumed <- struct{}{}:
	default:
	}
}

// Resume undoes Pause and runs a discovery sweep at once, unless the coordinator's pause, the
// leader election or a broken journal still halts the edge.
func (e *Edge) Resume() {
	if e.paused.Swap(false) {
		e.log.Warn("provisioning resumed")
	}
	if !e.showPaused() {
		e.wakeDiscovery()
	}
}

// Paused is the operator's pause through this edge's endpoint (see ClusterPaused for the
// coordinator's).
func (e *Edge) Paused() bool { return e.paused.Load() }

// noteSeen records when discovery last saw each node, for the flow's "waited over two intervals"
// skip. Cluster mode keeps no such record: another edge's discovery may have seen the node, so the
// skip does not apply there (it would loop on released nodes).
func (e *Edge) noteSeen(ids []string) {
	if e.o.Mode.shared() {
		return
	}
	now := e.o.Now()
	e.mu.Lock()
	for _, id := range ids {
		e.seen[id] = now
	}
	e.mu.Unlock()
}

func (e *Edge) lastSeen(id string) time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.seen[id]
}

func (e *Edge) forget(id string) {
	e.mu.Lock()
	delete(e.seen, id)
	e.mu.Unlock()
}
