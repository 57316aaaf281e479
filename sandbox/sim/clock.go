// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"time"
)

// epoch is real time 0 of every run (2030-01-01 UTC), as a wall clock with no skew reads it.
const epoch = 1893456000 * int64(time.Second)

// clock is one process's two readings of simulated real time. Its monotonic clock starts at an
// arbitrary origin and runs at 1+ppm/1e6 of real time (drift); its wall clock runs at the same
// rate, offset by a skew that steps may change at any moment.
type clock struct {
	s      *Sim
	ppm    int64
	origin int64 // monotonic reading at real time 0
	wall   int64 // wall clock minus (epoch + drifted real time): skew and steps
}

func newClock(s *Sim, maxPPM int64, skew time.Duration) *clock {
	return &clock{s: s, ppm: s.rng.Int64N(2*maxPPM+1) - maxPPM, origin: int64(s.between(time.Hour, 1000*time.Hour)), wall: int64(skew)}
}

// drifted is real time t as this clock's rate counts it.
func (c *clock) drifted(t int64) int64 { return t + t*c.ppm/1_000_000 }

// mono is the monotonic reading at real time t.
func (c *clock) mono(t int64) int64 { return c.origin + c.drifted(t) }

// monoTime is the monotonic reading now as a time.Time, the form edge/lease.Held counts in; it
// carries no Go monotonic reading, so comparisons use exactly these nanoseconds.
func (c *clock) monoTime() time.Time { return time.Unix(0, c.mono(c.s.now)) }

// realAt is the real time at which the monotonic clock reads m (the first such nanosecond).
func (c *clock) realAt(m int64) int64 {
	d := m - c.origin
	t := d * 1_000_000 / (1_000_000 + c.ppm)
	for c.drifted(t) < d {
		t++
	}
	for t > 0 && c.drifted(t-1) >= d {
		t--
	}
	return t
}

// Now is the wall clock (lease.Clock).
func (c *clock) Now() time.Time { return time.Unix(0, epoch+c.drifted(c.s.now)+c.wall).UTC() }

// Monotonic is the monotonic clock (lease.Clock).
func (c *clock) Monotonic() time.Duration { return time.Duration(c.mono(c.s.now)) }

// step moves the wall clock by d (NTP, a hypervisor, an operator); the monotonic clock is untouched.
func (c *clock) step(d time.Duration) { c.wall += int64(d) }
