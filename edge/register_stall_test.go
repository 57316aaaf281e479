// SPDX-License-Identifier: Apache-2.0

package edge_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/edge/register"
	"github.com/seed96588659/muster/pkg/testkit"
)

// stoppedFinder is a finder whose first sweep is cut by a stop of the whole process: the
// replies it returns were received before the stop and are read after it.
type stoppedFinder struct {
	eventFinder
	sweeps atomic.Int64
	stop   func()
}

func (f *stoppedFinder) Sweep(ctx context.Context, ids ...string) ([]string, error) {
	if f.sweeps.Add(1) == 1 {
		f.stop()
	}
	return f.eventFinder.Sweep(ctx, ids...)
}

// sightings is a lease source that records every sighting registered, and how many sweeps had
// started when it was.
type sightings struct {
	*lease.Local
	sweeps func() int64
	mu     sync.Mutex
	got    []sighting
}

type sighting struct {
	register.Found
	sweeps int64
}

func (s *sightings) Register(ctx context.Context, found []register.Found) (int, error) {
	s.mu.Lock()
	for _, f := range found {
		s.got = append(s.got, sighting{Found: f, sweeps: s.sweeps()})
	}
	s.mu.Unlock()
	return s.Local.Register(ctx, found)
}

func (s *sightings) of(id string) []sighting {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []sighting
	for _, g := range s.got {
		if g.Identity == id {
			out = append(out, g)
		}
	}
	return out
}

// stoppableClock is the edge's monotonic clock; stop moves it as a SIGSTOP of the process would.
type stoppableClock struct{ ns atomic.Int64 }

func (c *stoppableClock) now(t0 time.Time) func() time.Time {
	return func() time.Time { return t0.Add(time.Duration(c.ns.Load())) }
}

func (c *stoppableClock) stop(d time.Duration) { c.ns.Add(int64(d)) }

// Replies a sweep received before the edge was stopped are read after it wakes, dated by the
// sweep's end and fresh by that date; meanwhile another edge may have provisioned the nodes that
// sent them, and registering them would queue those nodes again. The sweep is dropped and a sweep
// soon after registers what is still in provisioning mode.
func TestEdge_ASweepCutByAStopIsNotRegistered(t *testing.T) {
	var clock stoppableClock
	now := clock.now(time.Now())
	f := &stoppedFinder{eventFinder: eventFinder{ids: []string{"a"}}, stop: func() { clock.stop(9 * time.Second) }}
	src := &sightings{Local: lease.NewLocal(lease.LocalOptions{Edge: "e", Region: "r", Now: now}), sweeps: f.sweeps.Load}
	run(t, edge.Options{Workers: 1, Interval: time.Hour, Now: now, RegisterFresh: time.Second, Flow: newFlow(provisioned), Finder: f, Mode: edge.Standalone(src)})
	testkit.WaitFor(t, 30*time.Second, "a registered", func() bool { return len(src.of("a")) > 0 })
	if got := src.of("a")[0]; got.sweeps < 2 {
		t.Fatalf("a was registered from the sweep the stop cut (%d sweeps had started), want only from a sweep after it", got.sweeps)
	}
}

// A startup event that waited in the socket while the edge was stopped is handled right after it
// wakes and would be dated then. It may be older than the stop, so it is dropped; the sweep soon
// after finds the node if it is still in provisioning mode.
func TestEdge_AnEventReadRightAfterAStopIsNotRegistered(t *testing.T) {
	var clock stoppableClock
	now := clock.now(time.Now())
	f := &stoppedFinder{stop: func() {}}
	src := &sightings{Local: lease.NewLocal(lease.LocalOptions{Edge: "e", Region: "r", Now: now}), sweeps: f.sweeps.Load}
	run(t, edge.Options{Workers: 1, Interval: time.Hour, Now: now, RegisterFresh: time.Second, Flow: newFlow(provisioned), Finder: f, Mode: edge.Standalone(src)})
	testkit.WaitFor(t, 30*time.Second, "the first sweep", func() bool { return f.sweeps.Load() >= 1 })
	clock.stop(9 * time.Second)
	f.announce("b")
	testkit.WaitFor(t, 30*time.Second, "b registered", func() bool { return len(src.of("b")) > 0 })
	if got := src.of("b"); slices.ContainsFunc(got, func(s sighting) bool { return s.Event }) {
		t.Fatalf("b was registered from the event read right after the stop: %+v", got)
	}
}
