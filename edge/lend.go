// SPDX-License-Identifier: Apache-2.0

package edge

import (
	"context"
	"time"
)

// lender runs one leased host's flow on a worker and, while the flow waits out the duplicate
// window (hostflow.Host.Idle), gives the worker and the host's place in the window to other
// hosts: every flow with a credential step waits that long (500 ms by default, several flows'
// worth of work), and a worker or place kept for it would cut the edge's rate by as much. A
// host that idled is leased beyond the window until it is done; how many those are is bounded
// by the rate times the duplicate window, and each is in the middle of its flow, not hoarded.
type lender struct {
	workers chan struct{}
	slots   *window
	now     func() time.Time

	working bool          // the host holds a worker
	placed  bool          // the host holds a place in the window
	idled   time.Duration // time spent without a worker, not the flow's work
}

// idle gives the worker and the place back, waits d or until ctx ends, then waits for a free
// worker; without one (ctx ended) the flow stops.
func (l *lender) idle(ctx context.Context, d time.Duration) error {
	start := l.now()
	defer func() { l.idled += l.now().Sub(start) }()
	if l.working {
		<-l.workers
		l.working = false
	}
	if l.placed {
		l.slots.release(1)
		l.placed = false
	}
	if !sleep(ctx, d) {
		return ctx.Err()
	}
	select {
	case l.workers <- struct{}{}:
		l.working = true
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// done frees what the host still holds, and records its flow's work (time idle excluded) in
// the window's average when it ran on a worker.
func (l *lender) done(took time.Duration, ran bool) {
	if l.working {
		<-l.workers
		l.working = false
	}
	if ran {
		l.slots.flowed(took - l.idled)
	}
	if l.placed {
		l.slots.release(1)
		l.placed = false
	}
}
