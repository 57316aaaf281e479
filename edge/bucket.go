// SPDX-License-Identifier: Apache-2.0

package edge

import (
	"sync"
	"time"
)

// bucket is a token bucket on an injected monotonic clock: up to burst tokens, refilled at rate
// per second. It bounds how many identities this edge has not seen answer before it takes in per
// second, whatever discovery and startup events name.
type bucket struct {
	rate  float64
	burst float64

	mu     sync.Mutex
	tokens float64
	last   time.Time
}

// newBucket starts full at now.
func newBucket(rate float64, burst int, now time.Time) *bucket {
	return &bucket{rate: rate, burst: float64(burst), tokens: float64(burst), last: now}
}

// take takes up to n tokens at now and returns how many it got.
func (b *bucket) take(now time.Time, n int) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if d := now.Sub(b.last); d > 0 {
		b.tokens = min(b.burst, b.tokens+d.Seconds()*b.rate)
		b.last = now
	}
	got := min(n, int(b.tokens))
	b.tokens -= float64(got)
	return got
}
