// SPDX-License-Identifier: Apache-2.0

package edge

import (
	"context"
	"sync"
	"time"
)

// stallTick paces stallWatch, and stallGap is the jump between two ticks it takes for a stop of
// the process. A stop shorter than stallGap ages a sighting by at most that much beyond what its
// date says, which RegisterFresh plus a sweep leaves room for below reprovision_after (4 s in
// the chaos lab, 30 s by default). It is four times rpc.MaxStall because a false stop costs a
// whole sweep: on an overloaded machine a ticker is late by 250 ms often enough to starve
// registration.
const (
	stallTick = 50 * time.Millisecond
	stallGap  = time.Second
)

// stallWatch notices the edge being stopped (SIGSTOP, a suspended VM, a long GC pause) from the
// jumps of its monotonic clock. Replies and events that waited in the socket while the process was
// stopped are read after it wakes and would be dated then: a sighting whose span a stall overlaps
// may be older than it looks and is not registered (a stale sighting queues again a node another
// edge provisioned meanwhile).
type stallWatch struct {
	now func() time.Time

	mu    sync.Mutex
	last  time.Time // the latest tick
	ended time.Time // when the latest stall was seen to end
}

func newStallWatch(now func() time.Time) *stallWatch {
	return &stallWatch{now: now, last: now()}
}

// run ticks until ctx ends.
func (w *stallWatch) run(ctx context.Context) {
	t := time.NewTicker(stallTick)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			w.lastEnd() // ticks
		case <-ctx.Done():
			return
		}
	}
}

// tick records now, and a stall ending now when the previous tick is more than stallGap ago.
// The caller holds mu.
func (w *stallWatch) tick() {
	now := w.now()
	if now.Sub(w.last) > stallGap {
		w.ended = now
	}
	w.last = now
}

// lastEnd is when the latest stall ended, zero if none. It ticks first, so a check made right
// after the process woke sees its stall before the ticker does; a sighting from before the
// returned time may be older than it looks.
func (w *stallWatch) lastEnd() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tick()
	return w.ended
}
