// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/internal/testcluster"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// eventMemory is the event log these tests keep: small, so a reader falls out of it with a few
// registrations.
const eventMemory = 20

// follower is a following reader of one member's event log, run by Service.Events.
type follower struct {
	mu     sync.Mutex
	events []api.Event
	done   chan error
	stop   context.CancelFunc
}

// follow reads svc's events from the start, following; hold, when set, blocks the reader in its
// first send until it is closed (a reader that fell behind while it wrote a page).
func follow(t *testing.T, svc *coordinator.Service, hold <-chan struct{}) *follower {
	t.Helper()
	ctx, stop := context.WithCancel(t.Context())
	f := &follower{done: make(chan error, 1), stop: stop}
	t.Cleanup(func() { stop(); <-f.done })
	go func() {
		f.done <- svc.Events(ctx, api.EventPosition{}, api.EventFilter{}, true, func(e api.Event) error {
			if hold != nil {
				<-hold
				hold = nil
			}
			f.mu.Lock()
			f.events = append(f.events, e)
			f.mu.Unlock()
			return nil
		})
	}()
	return f
}

func (f *follower) seen() []api.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]api.Event(nil), f.events...)
}

// checkNoSilentGap fails the test unless the reader, having fallen out of the log, was told so
// with a reset (and says how many registrations it missed).
func checkNoSilentGap(t *testing.T, es []api.Event, registered map[string]bool) {
	t.Helper()
	sawReset := false
	got := map[string]bool{}
	for _, e := range es {
		if e.Kind == api.EventReset {
			sawReset = true
			continue
		}
		got[e.Identity] = true
	}
	missed := 0
	for id := range registered {
		if !got[id] {
			missed++
		}
	}
	if missed > 0 && !sawReset {
		t.Fatalf("the reader missed %d of %d events and was never told (no reset event among %d read)", missed, len(registered), len(es))
	}
	if !sawReset {
		t.Fatalf("the reader fell more than the retained %d events behind and got no reset", eventMemory)
	}
}

// TestEvents_AReaderThatFallsBehindBetweenPagesGetsAReset: a following reader still writing its
// first page while more than the log keeps is applied reads the log again at its oldest event
// and must be told it missed some, as a reader that starts that far behind is.
func TestEvents_AReaderThatFallsBehindBetweenPagesGetsAReset(t *testing.T) {
	c := testcluster.New(t, 1)
	c.EditConfig = func(cfg *coordinator.Config) { cfg.EventMemory = eventMemory }
	c.StartAll()
	registered := map[string]bool{}
	register := func(prefix string, n int) {
		ids := testcluster.NodeIDs(prefix, n)
		c.Register("eu", ids...)
		for _, id := range ids {
			registered[id] = true
		}
	}
	register("a", 3)
	hold := make(chan struct{})
	f := follow(t, c.Members[0].Svc, hold)
	// The reader holds its first page (a's events); three times the log passes it meanwhile.
	for i := range 3 {
		register(fmt.Sprintf("b%d-", i), eventMemory)
	}
	close(hold)
	testkit.WaitFor(t, testcluster.WaitLimit, "the reader to reach the newest event", func() bool {
		es := f.seen()
		return len(es) > 0 && es[len(es)-1].Identity == testcluster.NodeIDs("b2-", eventMemory)[eventMemory-1]
	})
	checkNoSilentGap(t, f.seen(), registered)
}

// TestEvents_ASnapshotInstalledUnderAFollowingReaderResetsIt: a member cut off while the
// cluster writes more than the log keeps and compacts its Raft log catches up by installing the
// leader's snapshot, which replaces its event log; a reader following that member all along must
// be told it missed events.
func TestEvents_ASnapshotInstalledUnderAFollowingReaderResetsIt(t *testing.T) {
	c := testcluster.New(t, 3, testcluster.WithNetem())
	c.Timeouts = testcluster.StableTimeouts()
	c.EditConfig = func(cfg *coordinator.Config) {
		cfg.EventMemory = eventMemory
		cfg.SnapshotThreshold, cfg.SnapshotInterval, cfg.TrailingLogs = 1<<40, time.Hour, 2
	}
	leader := c.StartAll()
	registered := map[string]bool{}
	ids := testcluster.NodeIDs("a", 3)
	c.Register("eu", ids...)
	var cut *testcluster.Member
	for _, m := range c.Members {
		if m != leader {
			cut = m
		}
	}
	c.WaitConverged(c.Running()...)
	f := follow(t, cut.Svc, nil)
	testkit.WaitFor(t, testcluster.WaitLimit, "the reader to read a's events", func() bool { return len(f.seen()) == len(ids) })
	for _, id := range ids {
		registered[id] = true
	}

	c.Net.Partition(cut.ID)
	for i := range 3 {
		ids := testcluster.NodeIDs(fmt.Sprintf("b%d-", i), eventMemory)
		c.Register("eu", ids...)
		for _, id := range ids {
			registered[id] = true
		}
	}
	l := c.WaitLeader()
	if _, err := l.Svc.Snapshot(t.Context()); err != nil {
		t.Fatalf("snapshot on the leader: %v", err)
	}
	c.Net.Heal(cut.ID)
	c.WaitConverged(c.Running()...)
	testkit.WaitFor(t, testcluster.WaitLimit, "the reader to reach the newest event", func() bool {
		es := f.seen()
		return len(es) > 0 && es[len(es)-1].Identity == testcluster.NodeIDs("b2-", eventMemory)[eventMemory-1]
	})
	checkNoSilentGap(t, f.seen(), registered)
}
