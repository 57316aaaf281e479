// SPDX-License-Identifier: Apache-2.0

package lessor

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/seed96588659/muster/coordinator/internal/testutil"
	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/pkg/testkit"
)

// direct applies proposals straight to a real ledger, one log index each, as a single member
// would after commit; the ledger's notifications go to the manager as in the service.
type direct struct {
	mu    sync.Mutex
	l     *ledger.Ledger
	index uint64
	// applied, when set, receives every command after it was applied.
	applied chan ledger.Command
}

func (d *direct) propose(_ context.Context, cmd ledger.Command) (any, error) {
	data, err := ledger.EncodeCommand(cmd)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.index++
	res := d.l.ApplyLogs([]*raft.Log{{Index: d.index, Term: 1, Type: raft.LogCommand, Data: data}})[0]
	if d.applied != nil {
		d.applied <- cmd
	}
	if err, ok := res.(error); ok {
		return nil, err
	}
	return res, nil
}

func newManager(t *testing.T) (*Manager, *direct, *testutil.Clock) {
	t.Helper()
	var m *Manager
	l, err := ledger.Open(filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{OnApply: func(a ledger.Applied) {
		if m != nil {
			m.Notify(a)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	d := &direct{l: l}
	clock := testutil.NewClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	// Recheck is an hour so a long poll can only return early because it was woken.
	m, err = New(Config{TTL: 10 * time.Second, Grace: 2 * time.Second, ExpiryInterval: time.Hour, Recheck: time.Hour, Extension: 500 * time.Millisecond}, l, d.propose, clock, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m, d, clock
}

// leaseOf is the lease of an Acquire's answer.
func leaseOf(a Acquired, err error) (*ledger.Lease, error) { return a.Lease, err }

// firstLease is edge e's acquire of one node of eu under request id req-1, which must be granted:
// the request, to be sent again, and its lease.
func firstLease(t *testing.T, m *Manager) (Request, *ledger.Lease) {
	t.Helper()
	req := Request{Edge: "e", Region: "eu", MaxNodes: 1, RequestID: "req-1"}
	first, err := leaseOf(m.Acquire(context.Background(), req))
	if err != nil || first == nil {
		t.Fatalf("acquire: %+v %v", first, err)
	}
	return req, first
}

// expiresAt runs m's expiry a nanosecond before due and at due: lease id must stand at the first
// and be gone at the second (when names due in the failure).
func expiresAt(t *testing.T, m *Manager, d *direct, clock *testutil.Clock, id string, due time.Time, when string) {
	t.Helper()
	ctx := context.Background()
	clock.Advance(due.Sub(clock.Now()) - time.Nanosecond)
	if err := m.ExpireDue(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := d.l.Lease(id); err != nil {
		t.Fatalf("lease %s expired before %s: %v", id, when, err)
	}
	clock.Advance(time.Nanosecond)
	if err := m.ExpireDue(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := d.l.Lease(id); !errors.Is(err, ledger.ErrUnknownLease) {
		t.Fatalf("lease %s not expired at %s: %v", id, when, err)
	}
}

// enabledManager is newManager with nodes registered in eu and leadership gained.
func enabledManager(t *testing.T, ids ...string) (*Manager, *direct, *testutil.Clock) {
	t.Helper()
	m, d, clock := newManager(t)
	ctx := context.Background()
	c := &ledger.Register{Now: clock.Now(), Policy: m.cfg.Policy}
	for _, id := range ids {
		c.Nodes = append(c.Nodes, ledger.RegisterNode{Identity: id, Region: "eu"})
	}
	if _, err := d.propose(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := m.Enable(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Disable)
	return m, d, clock
}

func TestManager_DisabledRefusesEverything(t *testing.T) {
	m, _, _ := newManager(t)
	if _, err := m.Acquire(context.Background(), Request{Edge: "e", Region: "eu", MaxNodes: 1}); !errors.Is(err, ErrDisabled) {
		t.Fatalf("acquire on a disabled manager: %v", err)
	}
	if _, err := m.Renew(context.Background(), Ref{ID: "l", Token: 1}); !errors.Is(err, ErrDisabled) {
		t.Fatalf("renew on a disabled manager: %v", err)
	}
	if err := m.ExpireDue(context.Background()); !errors.Is(err, ErrDisabled) {
		t.Fatalf("expire on a disabled manager: %v", err)
	}
}

func TestManager_AcquireWithRequestIDIsIdempotent(t *testing.T) {
	m, d, _ := enabledManager(t, "a", "b")
	ctx := context.Background()
	req, first := firstLease(t, m)
	// The retry finds the lease although its node is no longer eligible, and a waiting node
	// (b) is not granted to it.
	again, err := leaseOf(m.Acquire(ctx, req))
	if err != nil || again == nil || again.ID != first.ID || again.Token != first.Token || !slices.Equal(again.Nodes, first.Nodes) {
		t.Fatalf("retry got %+v (%v), want %+v", again, err, first)
	}
	if ls, _ := d.l.Leases(); len(ls) != 1 {
		t.Fatalf("%d leases after a retried acquire, want 1", len(ls))
	}
	// Another edge with the same request id, or a new request id, is a new request.
	for _, r := range []Request{{Edge: "f", Region: "eu", MaxNodes: 1, RequestID: "req-1"}, {Edge: "e", Region: "eu", MaxNodes: 1, RequestID: "req-2"}} {
		ls, err := leaseOf(m.Acquire(ctx, r))
		if r.Edge == "f" {
			if err != nil || ls == nil || ls.ID == first.ID || ls.Nodes[0] != "b" {
				t.Fatalf("acquire %+v: %+v %v", r, ls, err)
			}
			continue
		}
		if err != nil || ls != nil {
			t.Fatalf("acquire %+v with nothing waiting: %+v %v", r, ls, err)
		}
	}
}

func TestManager_EnableExtendsThenExpiresOnlyAfterGrace(t *testing.T) {
	m, d, clock := newManager(t)
	ctx := context.Background()
	d.propose(ctx, &ledger.Register{Now: clock.Now(), Policy: m.cfg.Policy, Nodes: []ledger.RegisterNode{{Identity: "a", Region: "eu"}}})
	if err := m.Enable(ctx); err != nil {
		t.Fatal(err)
	}
	ls, err := leaseOf(m.Acquire(ctx, Request{Edge: "e", Region: "eu", MaxNodes: 5}))
	if err != nil || ls == nil {
		t.Fatalf("acquire: %+v %v", ls, err)
	}
	m.Disable()
	// A new term: enabling again extends the outstanding lease by the extension first.
	if err := m.Enable(ctx); err != nil {
		t.Fatal(err)
	}
	defer m.Disable()
	got, _ := d.l.Lease(ls.ID)
	if want := ls.ExpiresAt.Add(500 * time.Millisecond); !got.ExpiresAt.Equal(want) {
		t.Fatalf("expires_at after enable = %s, want %s", got.ExpiresAt, want)
	}
	expiresAt(t, m, d, clock, ls.ID, got.ExpiresAt.Add(2*time.Second), "expires_at+grace")
}

func TestManager_LongPollWokenByRegistrationAndDisable(t *testing.T) {
	m, d, clock := newManager(t)
	ctx := context.Background()
	if err := m.Enable(ctx); err != nil {
		t.Fatal(err)
	}
	type result struct {
		ls  *ledger.Lease
		err error
	}
	got := make(chan result, 1)
	go func() {
		ls, err := leaseOf(m.Acquire(ctx, Request{Edge: "e", Region: "eu", MaxNodes: 5, Wait: 20 * time.Second}))
		got <- result{ls, err}
	}()
	d.propose(ctx, &ledger.Register{Now: clock.Now(), Policy: m.cfg.Policy, Nodes: []ledger.RegisterNode{{Identity: "a", Region: "eu"}}})
	select {
	case r := <-got:
		if r.err != nil || r.ls == nil || r.ls.Nodes[0] != "a" {
			t.Fatalf("woken long poll = %+v", r)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("long poll not woken by a registration")
	}
	go func() {
		ls, err := leaseOf(m.Acquire(ctx, Request{Edge: "e", Region: "us", MaxNodes: 5, Wait: 20 * time.Second}))
		got <- result{ls, err}
	}()
	m.Disable()
	select {
	case r := <-got:
		if !errors.Is(r.err, ErrDisabled) {
			t.Fatalf("long poll after disable = %+v", r)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("long poll not ended by losing leadership")
	}
}

// TestManager_ReplayedAcquireCountsTheTTLFromTheRetry: an edge whose acquire answer was lost
// retries later with the same request id and counts the lease valid from when it sent the retry.
// The ledger must then hold the nodes for it at least a TTL (plus grace) from the retry, or they
// could be granted to another edge while the first still believes it holds them.
func TestManager_ReplayedAcquireCountsTheTTLFromTheRetry(t *testing.T) {
	m, d, clock := enabledManager(t, "a")
	ctx := context.Background()
	req, first := firstLease(t, m)
	clock.Advance(m.cfg.TTL - time.Second)
	retriedAt := clock.Now()
	again, err := leaseOf(m.Acquire(ctx, req))
	if err != nil || again == nil || again.ID != first.ID || again.Token != first.Token {
		t.Fatalf("retry got %+v (%v), want lease %s token %d", again, err, first.ID, first.Token)
	}
	if want := retriedAt.Add(m.cfg.TTL); again.ExpiresAt.Before(want) {
		t.Fatalf("replayed lease expires at %s, before retry + ttl %s", again.ExpiresAt, want)
	}
	// Just before retry + ttl + grace: the lease stands and no other edge gets its node.
	clock.Advance(m.cfg.TTL + m.cfg.Grace - time.Nanosecond)
	if err := m.ExpireDue(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := d.l.Lease(first.ID); err != nil {
		t.Fatalf("lease expired before the retry's ttl and grace ran out: %v", err)
	}
	if ls, err := leaseOf(m.Acquire(ctx, Request{Edge: "f", Region: "eu", MaxNodes: 1})); err != nil || ls != nil {
		t.Fatalf("another edge was granted %+v (%v) while the retried lease stands", ls, err)
	}
}

// TestManager_ReplayIsAnsweredThroughTheLog: a member that lost leadership without noticing yet
// must not answer a retried acquire from its own, possibly stale, ledger.
func TestManager_ReplayIsAnsweredThroughTheLog(t *testing.T) {
	m, _, _ := enabledManager(t, "a")
	ctx := context.Background()
	req, _ := firstLease(t, m)
	deposed := errors.New("not the leader any more")
	m.propose = func(context.Context, ledger.Command) (any, error) { return nil, deposed }
	if ls, err := leaseOf(m.Acquire(ctx, req)); !errors.Is(err, deposed) {
		t.Fatalf("retry on a deposed leader = %+v, %v; want the log's refusal", ls, err)
	}
}

// TestManager_WallClockStepsChangeNoLeasesFate: the leader's wall clock stepped forwards (by more
// than a TTL) or backwards between a grant and its expiry neither ends the lease early, nor
// refuses its renewal, nor keeps it beyond a TTL and the grace of real time.
func TestManager_WallClockStepsChangeNoLeasesFate(t *testing.T) {
	for _, step := range []time.Duration{3 * time.Minute, -3 * time.Minute} {
		t.Run(step.String(), func(t *testing.T) {
			m, d, clock := enabledManager(t, "a", "b")
			ctx := context.Background()
			ls, err := leaseOf(m.Acquire(ctx, Request{Edge: "e", Region: "eu", MaxNodes: 1}))
			if err != nil || ls == nil {
				t.Fatalf("acquire: %+v %v", ls, err)
			}
			clock.Step(step)
			if err := m.ExpireDue(ctx); err != nil {
				t.Fatal(err)
			}
			clock.Advance(m.cfg.TTL / 2)
			if err := m.ExpireDue(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := d.l.Lease(ls.ID); err != nil {
				t.Fatalf("lease ended half a TTL after its grant: %v", err)
			}
			if got, err := leaseOf(m.Acquire(ctx, Request{Edge: "f", Region: "eu", MaxNodes: 2})); err != nil || got == nil || slices.Contains(got.Nodes, ls.Nodes[0]) {
				t.Fatalf("edge f was granted %+v (%v) while e's lease on %s runs", got, err, ls.Nodes[0])
			}
			if _, err := m.Renew(ctx, Ref{ID: ls.ID, Token: ls.Token, Edge: "e", Region: "eu"}); err != nil {
				t.Fatalf("renew half a TTL after the grant: %v", err)
			}
			// After a TTL and the grace of real time since the renewal, the lease is due,
			// whatever the wall clock says.
			clock.Advance(m.cfg.TTL + m.cfg.Grace)
			if err := m.ExpireDue(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := d.l.Lease(ls.ID); !errors.Is(err, ledger.ErrUnknownLease) {
				t.Fatalf("lease not expired a TTL and grace after its renewal: %v", err)
			}
		})
	}
}

// TestManager_PromotionGivesEveryLeaseAFullTTL: a new leader cannot know how long ago the edge
// last renewed on the old leader's clock, so before it expires anything every outstanding lease
// runs a full TTL plus the extension from the new leader's own now.
func TestManager_PromotionGivesEveryLeaseAFullTTL(t *testing.T) {
	m, d, clock := enabledManager(t, "a")
	ctx := context.Background()
	ls, err := leaseOf(m.Acquire(ctx, Request{Edge: "e", Region: "eu", MaxNodes: 1}))
	if err != nil || ls == nil {
		t.Fatalf("acquire: %+v %v", ls, err)
	}
	clock.Advance(m.cfg.TTL - time.Second)
	m.Disable()
	if err := m.Enable(ctx); err != nil {
		t.Fatal(err)
	}
	expiresAt(t, m, d, clock, ls.ID, clock.Now().Add(m.cfg.TTL+m.cfg.Extension+m.cfg.Grace), "a full TTL, the extension and the grace after promotion")
}

// TestManager_ReplayedAcquireWhilePausedAnswersTheLease: an acquire whose answer was lost is
// retried after the operator paused; the lease exists, so the retry gets it (the edge then learns
// the pause at its next renew) instead of "paused" and a lease its edge never learns of.
func TestManager_ReplayedAcquireWhilePausedAnswersTheLease(t *testing.T) {
	m, d, clock := enabledManager(t, "a")
	ctx := context.Background()
	req, first := firstLease(t, m)
	if _, err := d.propose(ctx, &ledger.Pause{Now: clock.Now(), Paused: true}); err != nil {
		t.Fatal(err)
	}
	again, err := m.Acquire(ctx, req)
	if err != nil || again.Lease == nil || again.Lease.ID != first.ID || again.Lease.Token != first.Token {
		t.Fatalf("retry while paused got %+v (%v), want lease %s", again, err, first.ID)
	}
	// The answer says the cluster is paused: an edge reads it as the cluster's flag, and one that
	// read "not paused" would start the lease's hosts.
	if !again.Paused {
		t.Fatalf("retry while paused answered %+v: not paused", again)
	}
	if got, err := m.Acquire(ctx, Request{Edge: "e", Region: "eu", MaxNodes: 1, RequestID: "req-2"}); err != nil || !got.Paused || got.Lease != nil {
		t.Fatalf("a new request while paused got %+v (%v), want paused", got, err)
	}
}

// TestManager_LongPollAnswerCarriesTheHeldTime: a grant made after the request waited carries
// how long it waited, so the edge counts its lease from its send plus that time.
func TestManager_LongPollAnswerCarriesTheHeldTime(t *testing.T) {
	m, d, clock := enabledManager(t)
	ctx := context.Background()
	got := make(chan Acquired, 1)
	go func() {
		a, err := m.Acquire(ctx, Request{Edge: "e", Region: "eu", MaxNodes: 1, Wait: 20 * time.Second})
		if err != nil {
			t.Errorf("acquire: %v", err)
		}
		got <- a
	}()
	// Once the poll subscribed it has read its start; a registration after the clock moved
	// either wakes it or is seen by its first look, and both stamp the grant after the move.
	testkit.WaitFor(t, 10*time.Second, "the poll to subscribe", func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.regions["eu"] != nil
	})
	clock.Advance(7 * time.Second)
	d.propose(ctx, &ledger.Register{Now: clock.Now(), Policy: m.cfg.Policy, Nodes: []ledger.RegisterNode{{Identity: "a", Region: "eu"}}})
	a := <-got
	if a.Lease == nil {
		t.Fatalf("no lease: %+v", a)
	}
	if a.Held != 7*time.Second {
		t.Fatalf("held %s, want the 7s the poll waited", a.Held)
	}
}
