// SPDX-License-Identifier: Apache-2.0

package lessor

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/seed96588659/muster/coordinator/internal/testutil"
	"github.com/seed96588659/muster/coordinator/ledger"
)

// failoverWorld is one ledger shared by the leaders of a test, one after another, on clocks of
// one world, so the test can compare what the edge counts with what each leader does in real
// time.
type failoverWorld struct {
	t     *testing.T
	world *testutil.World
	l     *ledger.Ledger
	d     *direct

	// members are notified of every apply, as followers applying the log are.
	mu      sync.Mutex
	members []*Manager
}

func newFailoverWorld(t *testing.T) *failoverWorld {
	t.Helper()
	f := &failoverWorld{t: t, world: testutil.NewWorld(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))}
	l, err := ledger.Open(filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{OnApply: func(a ledger.Applied) {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, m := range f.members {
			m.Notify(a)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	f.l, f.d = l, &direct{l: l}
	if _, err := f.d.propose(context.Background(), &ledger.SetProtocol{Version: ledger.Protocol}); err != nil {
		t.Fatal(err)
	}
	return f
}

// leader starts a leader whose wall clock is skew ahead of real time and whose lease.ttl is ttl
// (grace 5 s, extension 1 s), and enables it; the test disables it when it loses leadership.
func (f *failoverWorld) leader(ttl, skew time.Duration) *Manager {
	f.t.Helper()
	return f.promote(f.member(Config{TTL: ttl, Grace: 5 * time.Second, MaxWait: 10 * time.Second, ExpiryInterval: time.Hour, Extension: time.Second}, skew))
}

// member starts a follower with cfg whose wall clock is skew ahead of real time: it sees every
// command applied from now on, as a member applying the log does.
func (f *failoverWorld) member(cfg Config, skew time.Duration) *Manager {
	f.t.Helper()
	m, err := New(cfg, f.l, f.d.propose, f.world.Clock(skew, 0), nil, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	f.mu.Lock()
	f.members = append(f.members, m)
	f.mu.Unlock()
	return m
}

// promote makes m the leader; the test disables it when it loses leadership.
func (f *failoverWorld) promote(m *Manager) *Manager {
	f.t.Helper()
	if err := m.Enable(context.Background()); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(m.Disable)
	return m
}

// expireUntil has m look for due leases every second of real time until real time until and
// fails the moment it expires lease id: the edge may still act on it.
func (f *failoverWorld) expireUntil(m *Manager, id string, until time.Duration) {
	f.t.Helper()
	for f.world.Real() < until {
		f.world.Advance(time.Second)
		if err := m.ExpireDue(context.Background()); err != nil {
			f.t.Fatal(err)
		}
		if _, err := f.l.Lease(id); err != nil {
			f.t.Fatalf("leader expired lease %s at real %s, the edge may act on it until %s (%v)", id, f.world.Real(), until, err)
		}
	}
}

// expiredBy has m look for due leases every second of real time and fails unless lease id is
// expired by real time bound: a promotion keeps a lease no longer than what it must cover.
func (f *failoverWorld) expiredBy(m *Manager, id string, bound time.Duration) {
	f.t.Helper()
	for {
		if err := m.ExpireDue(context.Background()); err != nil {
			f.t.Fatal(err)
		}
		if _, err := f.l.Lease(id); errors.Is(err, ledger.ErrUnknownLease) {
			return
		}
		if f.world.Real() >= bound {
			f.t.Fatalf("lease %s still outstanding at real %s", id, f.world.Real())
		}
		f.world.Advance(time.Second)
	}
}

// TestManager_PromotionKeepsWhatTheEdgeCountsUnderALongerOldTTL: leader A (lease.ttl 60 s, wall
// clock right) grants; B, restarted with lease.ttl 30 s during a rolling change and with a wall
// clock 20 s ahead, takes over. B's ledger time jumps 20 s forward at its promotion, so keeping
// the lease's expires_at of A's time would end it 15 s (skew - grace) before the edge stops
// counting A's 60 s. B keeps it to the edge's end, and not beyond the time since A's last stamp,
// the extension and the grace.
func TestManager_PromotionKeepsWhatTheEdgeCountsUnderALongerOldTTL(t *testing.T) {
	f := newFailoverWorld(t)
	a, got, sent := f.grantUnder(60*time.Second, 0)
	lastStamp := f.world.Real()
	edgeStops := sent + got.Held + got.Lease.TTL // before the edge's own margin
	f.world.Advance(time.Second)
	a.Disable()

	f.world.Advance(time.Second)
	promoted := f.world.Real()
	b := f.leader(30*time.Second, 20*time.Second)
	f.expireUntil(b, got.Lease.ID, edgeStops)
	f.expiredBy(b, got.Lease.ID, edgeStops+(promoted-lastStamp)+b.cfg.Extension+b.cfg.Grace)
}

// TestManager_PromotionKeepsALongerTTLThroughARenewalAndASecondFailover: the edge never moves its
// count backwards, so after A (ttl 60 s) granted and B (ttl 30 s, 20 s ahead) renewed, it still
// counts A's 60 s while the lease records B's 30 s. C (ttl 30 s, 40 s ahead) then takes over: a
// promotion that gave each lease its recorded TTL, or the longest recorded TTL of all leases,
// from C's now would end it before the edge stops. What A promised, carried over by B's
// promotion into B's time, must be carried over again into C's.
func TestManager_PromotionKeepsALongerTTLThroughARenewalAndASecondFailover(t *testing.T) {
	f := newFailoverWorld(t)
	ctx := context.Background()
	a, got, sent := f.grantUnder(60*time.Second, 0)
	edgeStops := sent + got.Held + got.Lease.TTL
	f.world.Advance(time.Second)
	a.Disable()

	f.world.Advance(time.Second)
	b := f.leader(30*time.Second, 20*time.Second)
	f.world.Advance(time.Second)
	sent = f.world.Real()
	ls, err := b.Renew(ctx, Ref{ID: got.Lease.ID, Token: got.Lease.Token, Edge: "edge-a", Region: "eu"})
	if err != nil {
		t.Fatal(err)
	}
	if ls.TTL != 30*time.Second {
		t.Fatalf("renewal by B recorded ttl %s", ls.TTL)
	}
	edgeStops = max(edgeStops, sent+ls.TTL)
	f.world.Advance(time.Second)
	b.Disable()

	f.world.Advance(time.Second)
	c := f.leader(30*time.Second, 40*time.Second)
	f.expireUntil(c, got.Lease.ID, edgeStops)
}

// grantUnder registers n1 and has a leader with ttl and skew grant it to edge-a; it returns the
// leader, the grant and the real time the acquire was sent.
func (f *failoverWorld) grantUnder(ttl, skew time.Duration) (*Manager, Acquired, time.Duration) {
	f.t.Helper()
	ctx := context.Background()
	if _, err := f.d.propose(ctx, &ledger.Register{Now: f.world.Clock(0, 0).Now(), Policy: ledger.DefaultPolicy(), Nodes: []ledger.RegisterNode{{Identity: "n1", Region: "eu"}}}); err != nil {
		f.t.Fatal(err)
	}
	m := f.leader(ttl, skew)
	sent := f.world.Real()
	got, err := m.Acquire(ctx, Request{Edge: "edge-a", Region: "eu", RequestID: "q1", MaxNodes: 1})
	if err != nil || got.Lease == nil {
		f.t.Fatalf("acquire: %+v %v", got, err)
	}
	return m, got, sent
}
