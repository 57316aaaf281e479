// SPDX-License-Identifier: Apache-2.0

package edge

import (
	"testing"
	"time"
)

// TestBucket_RefillsAtItsRateUpToItsBurst: on an injected clock, a full bucket gives its burst,
// then rate tokens a second, never more than the burst however long it waited.
func TestBucket_RefillsAtItsRateUpToItsBurst(t *testing.T) {
	t0 := time.Now()
	b := newBucket(10, 100, t0)
	for _, c := range []struct {
		at       time.Duration
		ask, got int
	}{
		{0, 150, 100},
		{0, 1, 0},
		{500 * time.Millisecond, 10, 5},
		{time.Second, 10, 5},
		{time.Hour, 1000, 100},
		{time.Hour - time.Second, 1, 0}, // a reading behind the last adds nothing
	} {
		if got := b.take(t0.Add(c.at), c.ask); got != c.got {
			t.Fatalf("at %s asking %d: got %d, want %d", c.at, c.ask, got, c.got)
		}
	}
}

// TestKnownSet_ForgetsTheOldestBeyondItsLimit: the set holds the newest limit identities.
func TestKnownSet_ForgetsTheOldestBeyondItsLimit(t *testing.T) {
	k := newKnownSet(2)
	k.add("a", "b", "a", "c")
	if k.has("a") || !k.has("b") || !k.has("c") {
		t.Fatalf("after a, b, c with a limit of 2: a %v b %v c %v, want only b and c", k.has("a"), k.has("b"), k.has("c"))
	}
}
