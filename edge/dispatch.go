// SPDX-License-Identifier: Apache-2.0

package edge

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/edge/journal"
	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/rpc"
)

// leased is one host flow's result with the lease it ran under.
type leased struct {
	hostflow.Result
	lease *lease.Held
	run   *leaseRun
	// leaseLost is true when the host stopped because its lease ran out on the edge's clock.
	leaseLost bool
	// withheld is true when the edge could not confirm what the node did with a call that may
	// have taken it out of provisioning mode: nothing is reported and its journal intent stays
	// open (confirm.go).
	withheld bool
	// replayed is true for an intent a previous run left open; sweeps counts the rediscoveries
	// that failed for it so far.
	replayed bool
	sweeps   int
}

// API is the result as reported to the source. A host the edge gave back without a failure of
// the node's own is released: it waits again without an attempt counted. That includes a host
// stopped mid-flow by lease loss: a live edge renews in the background whatever its hosts do, so
// its lease runs out only when renewals did not get through (elections, partitions, overload),
// which no node causes. A node whose flow kills the edge is still counted, by the coordinators'
// expiry of the silent edge's lease. A half-done flow is safe to give back: the ledger keeps the
// node's lock window with this edge, and a flow starts over from inventory.
func (l leased) API() api.NodeResult {
	r := l.Result.API()
	switch l.Outcome {
	case hostflow.Skipped, hostflow.Paused:
		r.Outcome = api.OutcomeReleased
	}
	return r
}

// errLeaseLost explains a host stopped because its lease ran out on the edge's clock.
var errLeaseLost = errors.New("stopped by lease loss")

// dispatch acquires leases and runs one host flow per leased node on at most Workers at a time.
// It keeps more nodes leased than Workers (window), so the next hosts are already in hand when a
// worker frees up: a coordinator's grant is a Raft commit and a round trip, and waiting for it at
// every free worker cost the cluster edge a fifth of its throughput. It acquires until ctx ends;
// the host flows and their leases' renewals run under flowCtx, which outlives ctx by the drain
// (Run). It returns once every flow it started has ended.
func (e *Edge) dispatch(ctx, flowCtx context.Context, results chan<- leased, box *outbox) {
	slots := newWindow(e.o.Workers)             // leased hosts not yet done
	workers := make(chan struct{}, e.o.Workers) // hosts whose flow runs
	var flows sync.WaitGroup
	defer flows.Wait()

	for ctx.Err() == nil {
		if e.halted() {
			e.waitResume(ctx)
			continue
		}
		n, ok := slots.take(ctx, e.o.BatchSize)
		if !ok {
			return
		}
		sent := e.o.Now()
		g, err := e.acquire(ctx, n, box)
		granted := 0
		if g.Lease != nil {
			granted = len(g.Lease.Nodes)
			slots.acquired(e.o.Now().Sub(sent) - g.Held)
		}
		slots.release(n - granted)
		if err != nil {
			e.acquireFailed(ctx, err)
			continue
		}
		e.setClusterPaused(g.Paused, g.PauseAt)
		if granted == 0 {
			continue
		}
		held := lease.NewHeld(*g.Lease, sent, g.Held, e.o.LeaseMargin)
		e.m.leases.Inc()
		// Registered by an edge of the region after their check: seen again, they are not new.
		e.newNodes.known.add(g.Lease.Nodes...)
		if !held.Valid(e.o.Now()) {
			// Its hosts are released untouched; without a pause this would spin on every grant.
			e.log.Error("lease granted already past its deadline on the edge's clock: is lease_margin at least the coordinator's lease.ttl?",
				"lease", g.Lease.ID, "ttl", g.Lease.TTL.Std(), "held", g.Held, "margin", e.o.LeaseMargin)
		}
		run := e.startLease(flowCtx, held)
		for _, id := range g.Lease.Nodes {
			flows.Add(1)
			go func() {
				defer flows.Done()
				results <- e.runHost(ctx, flowCtx, id, held, run, workers, slots)
			}()
		}
		if !held.Valid(e.o.Now()) {
			sleep(ctx, time.Second)
		}
	}
}

// acquire asks the source for up to n nodes, carrying the results parked in the outbox for it
// (carry.go). A grant of the wrong shape is not acted on, and nothing of it given back (a report
// under it would be acting on it): it expires at its source, which offers its nodes again.
func (e *Edge) acquire(ctx context.Context, n int, box *outbox) (lease.Grant, error) {
	var g lease.Grant
	var err error
	if parked := box.take(); len(parked) > 0 {
		// No long poll: the answers to the results would wait for it.
		var answers []lease.Delivered
		g, answers, err = e.o.Mode.carrier().AcquireCarrying(ctx, n, 0, deliveries(parked))
		box.carried(parked, answers, err)
	} else {
		g, err = e.o.Mode.source.Acquire(ctx, n, e.o.AcquireWait)
	}
	if err == nil && g.Lease != nil {
		if serr := lease.CheckShape(*g.Lease, n); serr != nil {
			err, g = fmt.Errorf("source granted %w", serr), lease.Grant{}
		}
	}
	return g, err
}

// acquireFailed logs a failed acquire and waits a second, so a source that keeps failing or
// refusing does not spin the edge.
func (e *Edge) acquireFailed(ctx context.Context, err error) {
	switch {
	case err != nil && errors.Is(err, lease.ErrGrantRefused):
		e.m.refused.Inc()
		e.log.Error("refused a granted lease; it expires at its source, which offers its nodes again", "error", err)
		sleep(ctx, time.Second)
	case err != nil && errors.Is(err, lease.ErrCredentialRefused):
		// The source said so once, names the remedy and spaces its own tries.
		sleep(ctx, time.Second)
	case err != nil:
		if ctx.Err() == nil {
			e.log.Error("could not acquire a lease", "error", err)
			sleep(ctx, time.Second)
		}
	}
}

// runHost runs one leased host on a worker (untouched when ctx ended before one was free) and
// frees its place; the lease is kept until its result is reported.
func (e *Edge) runHost(ctx, flowCtx context.Context, id string, held *lease.Held, run *leaseRun, workers chan struct{}, slots *window) leased {
	l := &lender{workers: workers, slots: slots, now: e.o.Now, placed: true}
	select {
	case workers <- struct{}{}:
		l.working = true
	case <-ctx.Done():
	}
	ran := l.working
	res := e.host(flowCtx, id, held, run, !ran, l.idle)
	l.done(res.Took, ran)
	return res
}

// leaseRun is what the hosts of one lease share: the renewer that keeps the lease until the
// result of its last host is settled (lease.Held.Renews).
type leaseRun struct {
	stop context.CancelFunc
	lost atomic.Bool
}

// settled counts n results of held settled (reported, refused, given up or withheld), and ends
// the renewals once none is left.
func (r *leaseRun) settled(held *lease.Held, n int) {
	if held.Settled(n) {
		r.stop()
	}
}

// startLease renews an expiring lease at the pace lease.Held.RenewPace sets while it
// lease.Held.Renews. A renewal refused for good ends the renewals: the hosts then stop at the
// deadline the last acknowledged acquire or renew gave them.
func (e *Edge) startLease(ctx context.Context, held *lease.Held) *leaseRun {
	rctx, stop := context.WithCancel(ctx)
	r := &leaseRun{stop: stop}
	if !held.Expires() {
		return r
	}
	go func() {
		defer stop()
		wait, _ := held.RenewPace()
		for {
			if !sleep(rctx, wait) || !held.Renews(e.o.Now()) {
				return
			}
			next, retry := held.RenewPace()
			wait = next
			sent := e.o.Now()
			// Past the lease's deadline on the edge's clock it is lost whatever the answer, so a
			// renewal held by a silent member is not waited on beyond it.
			cctx, cancel := context.WithTimeout(rctx, held.Deadline().Sub(sent))
			g, err := e.o.Mode.source.Renew(cctx, held.Lease())
			cancel()
			switch {
			case err != nil && rctx.Err() != nil:
				return
			case err != nil && lease.Stale(err):
				e.m.renewals.WithLabelValues("refused").Inc()
				e.log.Warn("lease refused by the coordinator; its hosts stop at the lease's deadline", "lease", held.Lease().ID, "error", err)
				return
			case err != nil:
				e.m.renewals.WithLabelValues("error").Inc()
				e.log.Warn("could not renew lease", "lease", held.Lease().ID, "error", err)
				wait = retry
			case g.Lease != nil:
				e.m.renewals.WithLabelValues("ok").Inc()
				held.Renewed(*g.Lease, sent)
				e.setClusterPaused(g.Paused, g.PauseAt)
			}
		}
	}()
	return r
}

// host runs the flow for one node under its lease's pause source, idle lending its worker while
// the flow waits; with stopping (the edge shuts down before a worker was free) the node is
// given back untouched.
func (e *Edge) host(ctx context.Context, id string, held *lease.Held, run *leaseRun, stopping bool, idle func(context.Context, time.Duration) error) leased {
	e.stats.inFlight.Add(1)
	e.m.busy.Inc()
	defer func() {
		e.stats.inFlight.Add(-1)
		e.m.busy.Dec()
	}()

	out := leased{lease: held, run: run}
	pause := leasePause{held: held, PauseFunc: func() bool {
		return e.halted() || e.stopping.Load() || !held.Valid(e.o.Now()) || !held.Holds(id)
	}}
	var res hostflow.Result
	if stopping || pause.Paused() {
		// Stopped before the flow sent the node anything.
		res = hostflow.Result{Outcome: hostflow.Paused, Err: fmt.Errorf("provisioning %s is paused", id)}
	} else {
		res = e.o.Flow.Run(ctx, hostflow.Host{Identity: id, Seen: e.lastSeen(id), Pause: pause, Record: e.recorder(id, held), Idle: idle})
	}
	res.Identity = id
	e.m.flowTime.Observe(res.Took.Seconds())
	// Under a second of lease is too little for any request to be valid on the node: as lost.
	if res.Outcome == hostflow.Paused && (!held.Valid(e.o.Now()) || errors.Is(res.Err, rpc.ErrDeadline)) {
		out.leaseLost = true
		res.Err = fmt.Errorf("%s: %w", id, errLeaseLost)
		if run.lost.CompareAndSwap(false, true) {
			e.m.leasesLost.Inc()
			e.log.Warn("lease ran out while hosts were in flight", "lease", held.Lease().ID)
		}
	}
	out.Result = res
	return out
}

// recorder makes the intent of a call that takes id out of provisioning mode durable in the
// journal, under the lease it is sent under; nil without a journal.
func (e *Edge) recorder(id string, held *lease.Held) func(context.Context, string) error {
	if e.o.Journal == nil {
		return nil
	}
	return func(ctx context.Context, step string) error {
		l := held.Lease()
		start := e.o.Now()
		err := e.o.Journal.Begin(ctx, journal.Intent{Node: id, Step: step, Lease: l.ID, Token: l.Token, Edge: l.Edge, Region: l.Region, At: e.o.Wall()})
		e.m.journalTime.Observe(e.o.Now().Sub(start).Seconds())
		if err != nil && ctx.Err() == nil {
			e.breakJournal(err)
		}
		return err
	}
}

// waitResume blocks while paused.
func (e *Edge) waitResume(ctx context.Context) {
	for e.halted() {
		if !sleep(ctx, 50*time.Millisecond) {
			return
		}
	}
}

// sleep waits d or until ctx ends; it reports whether the full time passed.
func sleep(ctx context.Context, d time.Duration) bool { return api.Sleep(ctx, d) == nil }
