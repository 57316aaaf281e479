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
	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/rpc"
)

// leased is one host flow's result with the lease it ran under.
type leased struct {
	hostflow.Result
	lease *lease.Held
}

// errLeaseLost explains a host stopped because its lease ran out on the edge's clock.
var errLeaseLost = errors.New("stopped by lease loss")

// dispatch acquires leases while workers are free and runs one host flow per leased node. It
// returns when ctx ends and every flow it started has ended.
func (e *Edge) dispatch(ctx context.Context, results chan<- leased) {
	slots := make(chan struct{}, e.o.Workers)
	var flows sync.WaitGroup
	defer flows.Wait()

	for ctx.Err() == nil {
		if e.Paused() {
			e.waitResume(ctx)
			continue
		}
		// Wait for one free worker, then take every other free one up to a batch.
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		n := 1
		for n < e.o.BatchSize {
			select {
			case slots <- struct{}{}:
				n++
				continue
			default:
			}
			break
		}

		sent := e.o.Now()
		g, err := e.o.Source.Acquire(ctx, n, e.o.AcquireWait)
		granted := 0
		if g.Lease != nil {
			granted = len(g.Lease.Nodes)
		}
		for range n - granted {
			<-slots
		}
		if err != nil {
			if ctx.Err() == nil {
				e.log.Error("could not acquire a lease", "error", err)
				sleep(ctx, time.Second)
			}
			continue
		}
		if granted == 0 {
			continue
		}

		held := lease.NewHeld(*g.Lease, sent, g.Held, e.o.LeaseMargin)
		e.m.leases.Inc()
		run := e.startLease(ctx, held, g.Paused)
		for _, id := range g.Lease.Nodes {
			flows.Add(1)
			go func() {
				defer flows.Done()
				defer func() { <-slots }()
				results <- e.host(ctx, id, held, run)
				run.done()
			}()
		}
	}
}

// leaseRun is what the hosts of one lease share: the source's pause flag from the last answer,
// and the renewer that keeps the lease while any of them runs.
type leaseRun struct {
	paused atomic.Bool
	left   atomic.Int64
	stop   context.CancelFunc
	lost   atomic.Bool
}

func (r *leaseRun) done() {
	if r.left.Add(-1) == 0 {
		r.stop()
	}
}

// startLease renews an expiring lease at a third of its TTL until its last host ends.
func (e *Edge) startLease(ctx context.Context, held *lease.Held, paused bool) *leaseRun {
	rctx, stop := context.WithCancel(ctx)
	r := &leaseRun{stop: stop}
	r.paused.Store(paused)
	r.left.Store(int64(len(held.Lease().Nodes)))
	if !held.Expires() {
		return r
	}
	go func() {
		defer stop()
		for {
			ttl := held.Lease().TTL.Std()
			if !sleep(rctx, ttl/3) {
				return
			}
			sent := e.o.Now()
			g, err := e.o.Source.Renew(rctx, held.Lease())
			switch {
			case err != nil:
				if rctx.Err() != nil {
					return
				}
				e.log.Warn("could not renew lease", "lease", held.Lease().ID, "error", err)
			case g.Lease != nil:
				held.Renewed(*g.Lease, sent, g.Held)
				r.paused.Store(g.Paused)
			}
		}
	}()
	return r
}

// host runs the flow for one node under its lease's pause source.
func (e *Edge) host(ctx context.Context, id string, held *lease.Held, run *leaseRun) leased {
	e.stats.inFlight.Add(1)
	e.m.busy.Inc()
	defer func() {
		e.stats.inFlight.Add(-1)
		e.m.busy.Dec()
	}()

	pause := rpc.PauseFunc(func() bool {
		return e.Paused() || run.paused.Load() || !held.Valid(e.o.Now())
	})
	res := e.o.Flow.Run(ctx, hostflow.Host{Identity: id, Seen: e.lastSeen(id), Pause: pause})
	res.Identity = id
	e.m.flowTime.Observe(res.Took.Seconds())
	if res.Outcome == hostflow.Paused && !held.Valid(e.o.Now()) {
		res.Err = fmt.Errorf("%s: %w", id, errLeaseLost)
		if run.lost.CompareAndSwap(false, true) {
			e.m.leasesLost.Inc()
			e.log.Warn("lease ran out while hosts were in flight", "lease", held.Lease().ID)
		}
	}
	return leased{Result: res, lease: held}
}

// waitResume blocks while paused.
func (e *Edge) waitResume(ctx context.Context) {
	for e.Paused() {
		if !sleep(ctx, 50*time.Millisecond) {
			return
		}
	}
}

// sleep waits d or until ctx ends; it reports whether the full time passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
