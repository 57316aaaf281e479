// SPDX-License-Identifier: Apache-2.0

package edge

import (
	"context"
	"testing"
	"time"
)

// The look-ahead starts at twice Workers (three times Workers leased, before it was measured),
// grows to twice what the workers finish during one acquire round trip, and stays between
// minAheadFactor and maxAheadFactor x Workers.
func TestWindow_LookAheadFollowsTheAcquireRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name          string
		acquire, flow time.Duration
		want          int
	}{
		{"unmeasured", 0, 0, 64 + 128},
		{"coordinator next door", time.Millisecond, 160 * time.Millisecond, 64 + 128},
		// 64 workers finish 120 hosts in 300 ms of 160 ms flows: twice that ahead.
		{"coordinator 300 ms away", 300 * time.Millisecond, 160 * time.Millisecond, 64 + 240},
		{"capped", 10 * time.Second, 10 * time.Millisecond, 64 + maxAheadFactor*64},
	} {
		w := newWindow(64)
		w.acquired(c.acquire)
		w.flowed(c.flow)
		w.mu.Lock()
		got := w.limit
		w.mu.Unlock()
		if got != c.want {
			t.Errorf("%s: window %d, want %d", c.name, got, c.want)
		}
	}
}

// A take waits while the window is full and goes on when a host is done or when the window grows;
// it takes no more than is free nor more than asked.
func TestWindow_TakeWaitsForAFreePlace(t *testing.T) {
	w := newWindow(1) // 3 places until measured, chunks of 1
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if n, ok := w.take(ctx, 2); !ok || n != 2 {
		t.Fatalf("first take: %d %v, want 2", n, ok)
	}
	if n, ok := w.take(ctx, 2); !ok || n != 1 {
		t.Fatalf("second take: %d %v, want the 1 place left", n, ok)
	}
	got := make(chan int)
	go func() {
		n, _ := w.take(ctx, 5)
		got <- n
	}()
	select {
	case n := <-got:
		t.Fatalf("a take on a full window returned %d", n)
	case <-time.After(50 * time.Millisecond):
	}
	w.release(1)
	if n := <-got; n != 1 {
		t.Fatalf("after one release: took %d, want 1", n)
	}

	go func() {
		n, _ := w.take(ctx, 5)
		got <- n
	}()
	w.acquired(time.Second) // a far coordinator: the window grows to 1 + maxAheadFactor*1 = 5
	w.flowed(time.Millisecond)
	if n := <-got; n != 5-3 {
		t.Fatalf("after the window grew: took %d, want %d", n, 5-3)
	}

	short, stop := context.WithCancel(ctx)
	stop()
	if _, ok := w.take(short, 1); ok {
		t.Fatal("a take with an ended context succeeded on a full window")
	}
}

// A take waits for half the look-ahead to be free, so one grant carries many hosts instead of
// one per host done; asked for fewer, it waits only for those.
func TestWindow_TakeWaitsForAChunkOfHalfTheLookAhead(t *testing.T) {
	w := newWindow(2) // 6 places, 4 ahead: chunks of 2
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if n, ok := w.take(ctx, 8); !ok || n != 6 {
		t.Fatalf("first take: %d %v, want 6", n, ok)
	}
	got := make(chan int)
	go func() {
		n, _ := w.take(ctx, 8)
		got <- n
	}()
	w.release(1)
	select {
	case n := <-got:
		t.Fatalf("a take with 1 place free of a chunk of 2 returned %d", n)
	case <-time.After(50 * time.Millisecond):
	}
	w.release(1)
	if n := <-got; n != 2 {
		t.Fatalf("after a chunk came free: took %d, want 2", n)
	}
	w.release(1)
	if n, ok := w.take(ctx, 1); !ok || n != 1 {
		t.Fatalf("asked for 1 with 1 free: %d %v, want 1", n, ok)
	}
}
