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

// eventFinder is a finder whose startup events the test sends and whose sweep answers ids.
type eventFinder struct {
	mu    sync.Mutex
	ids   []string
	event func(string)
}

func (f *eventFinder) Sweep(_ context.Context, ids ...string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(ids) > 0 {
		return nil, nil
	}
	return slices.Clone(f.ids), nil
}

func (f *eventFinder) Listen(_ context.Context, _ string, event func(string), _ func(error)) error {
	f.mu.Lock()
	f.event = event
	f.mu.Unlock()
	return nil
}

func (f *eventFinder) announce(id string) {
	f.mu.Lock()
	f.ids = append(f.ids, id)
	event := f.event
	f.mu.Unlock()
	event(id)
}

// cutOff is a lease source cut off from the edge until heal: every register hangs until its
// context ends, as one sent to coordinators the edge is partitioned from does (the edge has
// several registers in flight, so all of them must meet the outage); it records what registers
// deliver after heal.
type cutOff struct {
	*lease.Local
	cut     atomic.Bool
	calls   atomic.Int64
	hanging chan struct{}
	mu      sync.Mutex
	got     []string
	cutGot  []string // what registers sent during the outage (never delivered)
}

func (c *cutOff) Register(ctx context.Context, found []register.Found) (int, error) {
	if c.cut.Load() {
		c.mu.Lock()
		for _, f := range found {
			c.cutGot = append(c.cutGot, f.Identity)
		}
		c.mu.Unlock()
		if c.calls.Add(1) == 1 {
			close(c.hanging)
		}
		<-ctx.Done()
		return 0, ctx.Err()
	}
	c.mu.Lock()
	for _, f := range found {
		c.got = append(c.got, f.Identity)
	}
	c.mu.Unlock()
	return c.Local.Register(ctx, found)
}

func (c *cutOff) heal() { c.cut.Store(false) }

func (c *cutOff) registered() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.got)
}

func (c *cutOff) sentDuringOutage(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Contains(c.cutGot, id)
}

// A node seen while the coordinators were out of reach is not registered from that old sighting
// once they answer again: meanwhile another edge may have provisioned it, and a provisioned node
// "seen again in provisioning mode" is queued again. The stale sighting is dropped and a sweep soon after sees afresh what is
// still in provisioning mode; the register stuck on the cut-off coordinators ends in time too.
func TestEdge_StaleSightingsAreNotRegisteredAfterAnOutage(t *testing.T) {
	var clock atomic.Int64 // ns past t0, the edge's monotonic clock
	t0 := time.Now()
	now := func() time.Time { return t0.Add(time.Duration(clock.Load())) }
	f := &eventFinder{ids: []string{"a"}}
	src := &cutOff{Local: lease.NewLocal(lease.LocalOptions{Edge: "e", Region: "r", Now: now}), hanging: make(chan struct{})}
	src.cut.Store(true)
	run(t, edge.Options{Workers: 1, Interval: time.Hour, Now: now, RegisterFresh: time.Second, Flow: newFlow(provisioned), Finder: f, Mode: edge.Standalone(src)})
	select {
	case <-src.hanging: // the first sweep's register of a hangs
	case <-time.After(10 * time.Second):
		t.Fatal("no register was sent")
	}
	f.announce("b") // seen now, during the outage
	// Its register must meet the outage too: one checked fresh before the clock moved but
	// reaching the source after heal delivers a sighting that was fresh when sent (a loaded
	// CI machine registered b twice so).
	testkit.WaitFor(t, 10*time.Second, "b's register sent during the outage", func() bool { return src.sentDuringOutage("b") })
	clock.Add(int64(5 * time.Second))
	src.heal()
	testkit.WaitFor(t, 30*time.Second, "a and b registered from a fresh sweep", func() bool {
		got := src.registered()
		return slices.Contains(got, "a") && slices.Contains(got, "b")
	})
	if got := src.registered(); len(got) != 2 {
		t.Fatalf("registered %v, want a and b once, from the sweep after the outage (b's 5 s old sighting dropped)", got)
	}
}
