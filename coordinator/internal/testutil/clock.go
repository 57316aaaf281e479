// SPDX-License-Identifier: Apache-2.0

package testutil

import (
	"sync"
	"time"
)

// World is the real time of a test. Each Clock made from it is one machine's view of that time:
// a wall reading that may be offset, drift and be stepped, and a monotonic reading that only
// drifts. Tests move real time with Advance, so what depends on time is decided by the test.
type World struct {
	mu    sync.Mutex
	start time.Time
	real  time.Duration
}

// NewWorld returns a world whose real time starts at start.
func NewWorld(start time.Time) *World { return &World{start: start} }

// Advance moves real time on by d, for every clock of the world.
func (w *World) Advance(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.real += d
}

// Real is the real time elapsed since the world started: the common axis tests compare on.
func (w *World) Real() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.real
}

// Clock returns a machine's clock whose wall reading is offset from real time by skew and whose
// readings both run at 1+drift times real time (drift 1e-4 is a fast quartz of 100 ppm).
func (w *World) Clock(skew time.Duration, drift float64) *Clock {
	return &Clock{w: w, skew: skew, drift: drift, originReal: w.Real()}
}

// Clock is one machine's clock in a World, with the two readings a Go process has: Now (wall,
// may be stepped by NTP or an operator) and Monotonic (never stepped).
type Clock struct {
	w     *World
	drift float64
	// originReal is the world's real time when the clock was made: its monotonic origin.
	originReal time.Duration

	mu   sync.Mutex
	skew time.Duration
}

// NewClock returns a clock standing at start, alone in its own world.
func NewClock(start time.Time) *Clock { return NewWorld(start).Clock(0, 0) }

// World is the world the clock belongs to.
func (c *Clock) World() *World { return c.w }

func (c *Clock) scaled(real time.Duration) time.Duration {
	return real + time.Duration(float64(real)*c.drift)
}

// Now is the wall reading.
func (c *Clock) Now() time.Time {
	real := c.w.Real()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.w.start.Add(c.skew + c.scaled(real))
}

// Monotonic is the time elapsed on this machine's monotonic clock since the clock was made.
func (c *Clock) Monotonic() time.Duration { return c.scaled(c.w.Real() - c.originReal) }

// Advance moves the clock's world (real time, and so every clock of it) on by d.
func (c *Clock) Advance(d time.Duration) { c.w.Advance(d) }

// Step moves the wall reading alone by d, forwards or backwards, as a clock step does.
func (c *Clock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.skew += d
}
