// SPDX-License-Identifier: Apache-2.0

package edge

import (
	"context"
	"math"
	"sync"
	"time"
)

// window bounds the leased hosts not yet done: the Workers that run plus the hosts acquired
// ahead, so the next hosts are in hand when a worker frees up. How many are needed ahead is what
// the workers finish during one acquire round trip: a coordinator next door answers in
// milliseconds and Workers ahead is plenty, one far away needs more or the workers wait for
// every grant. The window measures both times and sizes the look-ahead at twice what one round
// trip consumes, between minAheadFactor and maxAheadFactor x Workers: never more than a small
// multiple, so one edge cannot hoard a region's nodes while its peers idle. The floor is twice
// Workers, not Workers, so that a grant (half the look-ahead) carries Workers hosts: each grant
// is an entry on every member, and since a lease's results ride the next acquire, halving the
// grants halves most of the entries. The edge holds Workers more nodes for it. (What each choice
// measured: docs/performance.md, What changed the figures.)
type window struct {
	workers int

	mu      sync.Mutex
	held    int
	limit   int
	acquire float64 // moving average of an acquire's round trip, seconds; 0 before the first
	flow    float64 // moving average of a host flow's time, seconds; 0 before the first
	changed chan struct{}
}

// minAheadFactor and maxAheadFactor bound the look-ahead at these many times Workers.
const (
	minAheadFactor = 2
	maxAheadFactor = 4
)

// ewmaWeight is the weight of a new sample in the moving averages.
const ewmaWeight = 0.2

func newWindow(workers int) *window {
	w := &window{workers: workers, changed: make(chan struct{}, 1)}
	w.limit = workers + w.aheadLocked()
	return w
}

// take waits for a chunk of free places (or max, when fewer are asked), then takes every free
// one up to max; false when ctx ended first. Waiting for a chunk, half the look-ahead, instead of
// one place makes each grant carry many hosts: at one place a grant per host finished, each grant
// a Raft entry written on every member and each lease reported and renewed on its own, cost the
// coordinators most of their CPU. The workers lose nothing by it: a take starts as soon as only
// Workers plus half the look-ahead remain in hand, and that half covers what the workers finish
// during the acquire's round trip (the look-ahead is twice it).
func (w *window) take(ctx context.Context, max int) (int, bool) {
	for {
		w.mu.Lock()
		if free := w.limit - w.held; free > 0 && free >= min(max, w.chunkLocked()) {
			n := min(free, max)
			w.held += n
			w.mu.Unlock()
			return n, true
		}
		w.mu.Unlock()
		select {
		case <-w.changed:
		case <-ctx.Done():
			return 0, false
		}
	}
}

// release gives back n places: hosts done, or places an acquire took and no grant filled.
func (w *window) release(n int) {
	if n <= 0 {
		return
	}
	w.mu.Lock()
	w.held -= n
	w.mu.Unlock()
	w.signal()
}

// acquired records one acquire's round trip (the time the server held it waiting excluded).
func (w *window) acquired(d time.Duration) { w.observe(&w.acquire, d) }

// flowed records one host flow's time.
func (w *window) flowed(d time.Duration) { w.observe(&w.flow, d) }

func (w *window) observe(avg *float64, d time.Duration) {
	if d <= 0 {
		return
	}
	w.mu.Lock()
	if *avg == 0 {
		*avg = d.Seconds()
	} else {
		*avg += ewmaWeight * (d.Seconds() - *avg)
	}
	old := w.limit
	w.limit = w.workers + w.aheadLocked()
	grew := w.limit > old
	w.mu.Unlock()
	if grew {
		w.signal()
	}
}

// aheadLocked is the look-ahead: twice the hosts the workers finish during one acquire.
func (w *window) aheadLocked() int {
	least := minAheadFactor * w.workers
	if w.acquire == 0 || w.flow == 0 {
		return least
	}
	need := int(math.Ceil(2 * float64(w.workers) * w.acquire / w.flow))
	return max(least, min(need, maxAheadFactor*w.workers))
}

// chunkLocked is the fewest free places a take waits for: half the look-ahead, at least one.
func (w *window) chunkLocked() int { return max(1, (w.limit-w.workers)/2) }

func (w *window) signal() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}
