// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/internal/testcluster"
	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/coordinator/raftnode"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

func TestCluster_FailoverKeepsLeasesAndGrantsNoNodeTwice(t *testing.T) {
	c := testcluster.New(t, 3)
	c.StartAll()
	c.Register("eu", testcluster.NodeIDs("n", 40)...)

	held := c.Acquire("edge-a", "eu", 10)
	if held == nil || len(held.Nodes) != 10 {
		t.Fatalf("first lease = %+v", held)
	}
	leader := c.WaitLeader()
	before, err := leader.Svc.Ledger().Lease(held.ID)
	if err != nil {
		t.Fatal(err)
	}

	c.Stop(leader)
	next := c.WaitLeader()
	if next == leader {
		t.Fatal("the stopped member still leads")
	}

	// The new leader extended the outstanding lease by one election timeout before doing anything.
	after, err := next.Svc.Ledger().Lease(held.ID)
	if err != nil {
		t.Fatalf("lease lost in the failover: %v", err)
	}
	// Exactly one election timeout, or a multiple if the machine was loaded enough for a second election.
	ext := after.ExpiresAt.Sub(before.ExpiresAt)
	if ext <= 0 || ext%(500*time.Millisecond) != 0 || ext > 5*time.Second {
		t.Fatalf("after promotion expires_at moved by %s, want a multiple of the 500ms election timeout", ext)
	}

	// The new leader grants, but none of the nodes the healthy edge still holds.
	other := c.Acquire("edge-b", "eu", 100)
	if other == nil || len(other.Nodes) != 30 || other.Token <= held.Token {
		t.Fatalf("lease from the new leader = %+v (first token %d)", other, held.Token)
	}
	for _, id := range other.Nodes {
		if slices.Contains(held.Nodes, id) {
			t.Fatalf("node %s granted twice while its first lease is unexpired", id)
		}
	}
	if l := c.Acquire("edge-c", "eu", 100); l != nil {
		t.Fatalf("granted %v with every node leased", l.Nodes)
	}

	// The healthy edge renews with the new leader and reports under its original token.
	c.OnLeader("renew across failover", func(m *testcluster.Member) error {
		_, err := m.Svc.Renew(context.Background(), api.RenewRequest{LeaseID: held.ID, Token: held.Token, Edge: "edge-a", Region: "eu"})
		return err
	})
	var rep api.ReportResponse
	c.OnLeader("report across failover", func(m *testcluster.Member) error {
		rep, err = m.Svc.Report(context.Background(), api.ReportRequest{LeaseID: held.ID, Token: held.Token, Edge: "edge-a", Region: "eu",
			Results: []api.NodeResult{{Identity: held.Nodes[0], Outcome: api.OutcomeProvisioned}}})
		return err
	})
	if len(rep.Applied) != 1 {
		t.Fatalf("report across failover applied %v", rep.Applied)
	}

	// edge-b goes quiet: only after expires_at+grace its nodes return, and its late report is stale.
	otherLease, err := c.WaitLeader().Svc.Ledger().Lease(other.ID)
	if err != nil {
		t.Fatal(err)
	}
	c.Clock.Advance(otherLease.ExpiresAt.Sub(c.Clock.Now()) + 5*time.Second - time.Millisecond)
	c.OnLeader("expire", func(m *testcluster.Member) error { return m.Svc.Leases().ExpireDue(context.Background()) })
	if _, err := c.WaitLeader().Svc.Ledger().Lease(other.ID); err != nil {
		t.Fatalf("lease expired before expires_at+grace: %v", err)
	}
	c.Clock.Advance(time.Millisecond)
	testkit.WaitFor(t, testcluster.WaitLimit, "edge-b's lease to expire", func() bool {
		cur, err := c.WaitLeader().Svc.Ledger().Lease(other.ID)
		if err == nil {
			// An election on a loaded machine extends the lease again: follow its new expiry.
			if d := cur.ExpiresAt.Add(c.Leases.Grace).Sub(c.Clock.Now()); d > 0 {
				c.Clock.Advance(d)
			}
		}
		return errors.Is(err, coordinator.ErrUnknownLease)
	})
	for {
		l := c.WaitLeader()
		_, err = l.Svc.Report(context.Background(), api.ReportRequest{LeaseID: other.ID, Token: other.Token, Edge: "edge-b", Region: "eu",
			Results: []api.NodeResult{{Identity: other.Nodes[0], Outcome: api.OutcomeFailed, Error: "x"}}})
		if !testcluster.LeadershipError(err) {
			break
		}
	}
	if !errors.Is(err, coordinator.ErrUnknownLease) {
		t.Fatalf("late failure under an expired lease: %v", err)
	}
	if n, _ := c.WaitLeader().Svc.Ledger().Node(other.Nodes[0]); n.State != api.StateWaiting {
		t.Fatalf("stale report changed node: %s", n.State)
	}
	// A provisioned result is a fact about the node: recorded late, under the token it was granted with.
	var late api.ReportResponse
	for {
		l := c.WaitLeader()
		late, err = l.Svc.Report(context.Background(), api.ReportRequest{LeaseID: other.ID, Token: other.Token, Edge: "edge-b", Region: "eu",
			Results: []api.NodeResult{{Identity: other.Nodes[0], Outcome: api.OutcomeProvisioned}}})
		if !testcluster.LeadershipError(err) {
			break
		}
	}
	if err != nil || len(late.Applied) != 1 {
		t.Fatalf("late provisioned report under an expired lease: %+v, %v", late, err)
	}
	if n, _ := c.WaitLeader().Svc.Ledger().Node(other.Nodes[0]); n.State != api.StateProvisioned {
		t.Fatalf("late provisioned report left node %s", n.State)
	}
	c.WaitConverged(c.Running()...)
}

func TestCluster_PartitionedLeaderCannotWriteAndCatchesUp(t *testing.T) {
	c := testcluster.New(t, 3, testcluster.WithNetem())
	c.StartAll()
	c.Register("eu", testcluster.NodeIDs("n", 20)...)

	old := c.WaitLeader()
	c.Net.Partition(old.ID)
	testkit.WaitFor(t, testcluster.WaitLimit, "a leader on the majority side", func() bool {
		for _, m := range c.Running() {
			if m != old && m.Svc.IsLeader() {
				return true
			}
		}
		return false
	})
	ls := c.Acquire("edge-b", "eu", 5)
	if ls == nil {
		t.Fatal("majority side granted nothing")
	}
	// The cut-off member cannot commit anything, whatever it believes.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	_, err := old.Svc.Register(ctx, api.RegisterRequest{Region: "eu", Edge: "edge-a", Nodes: []api.RegisterNode{{Identity: "lost-write"}}})
	cancel()
	if err == nil {
		t.Fatal("a partitioned member accepted a write")
	}

	c.Net.Heal(old.ID)
	c.WaitConverged(c.Running()...)
	if _, err := old.Svc.Ledger().Node("lost-write"); !errors.Is(err, coordinator.ErrUnknownNode) {
		t.Fatalf("write refused during the partition appeared after healing: %v", err)
	}
	if got, err := old.Svc.Ledger().Lease(ls.ID); err != nil || got.Token != ls.Token {
		t.Fatalf("healed member lacks the majority's lease: %+v %v", got, err)
	}
}

func TestCluster_RestartFromFilesKeepsLedger(t *testing.T) {
	c := testcluster.New(t, 3)
	c.StartAll()
	c.Register("eu", testcluster.NodeIDs("n", 30)...)
	c.Register("us", testcluster.NodeIDs("u", 10)...)
	ls := c.Acquire("edge-a", "eu", 10)
	c.Report(api.ReportRequest{LeaseID: ls.ID, Token: ls.Token,
		Results: []api.NodeResult{{Identity: ls.Nodes[0], Outcome: api.OutcomeProvisioned}, {Identity: ls.Nodes[1], Outcome: api.OutcomeFailed, Error: "boom"}}})
	for _, m := range c.Running() {
		if _, err := m.Svc.Snapshot(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	c.Register("eu", "after-snapshot")
	c.WaitConverged(c.Running()...)
	leader := c.Members[0]
	wantNodes, _, _ := leader.Svc.Ledger().Nodes(ledger.NodeFilter{WithHistory: true, Limit: 1000})
	wantCounts, _ := leader.Svc.Ledger().Counts()

	for _, m := range c.Members {
		c.Stop(m)
	}
	for _, m := range c.Members {
		c.Start(m, false)
	}
	c.WaitLeader()
	c.WaitConverged(c.Running()...)
	for _, m := range c.Running() {
		got, _, err := m.Svc.Ledger().Nodes(ledger.NodeFilter{WithHistory: true, Limit: 1000})
		if err != nil || !slices.EqualFunc(got, wantNodes, func(a, b ledger.Node) bool {
			return a.Identity == b.Identity && a.State == b.State && len(a.History) == len(b.History) && a.Attempts == b.Attempts
		}) {
			t.Fatalf("%s: nodes after restart differ (%d vs %d, %v)", m.ID, len(got), len(wantNodes), err)
		}
		if gc, _ := m.Svc.Ledger().Counts(); len(gc) != len(wantCounts) || gc["eu"][api.StateLeased] != wantCounts["eu"][api.StateLeased] {
			t.Fatalf("%s: counts %v, want %v", m.ID, gc, wantCounts)
		}
	}
	c.OnLeader("renew after a full restart", func(m *testcluster.Member) error {
		_, err := m.Svc.Renew(context.Background(), api.RenewRequest{LeaseID: ls.ID, Token: ls.Token})
		return err
	})
	if l := c.Acquire("edge-b", "us", 5); l == nil || len(l.Nodes) != 5 {
		t.Fatalf("no grant after restart: %+v", l)
	}
}

func TestCluster_FollowersRefuseWritesAndNameTheLeader(t *testing.T) {
	c := testcluster.New(t, 3)
	c.StartAll()
	// Checked again from the start if an election (a loaded machine) moves leadership meanwhile.
	testkit.WaitFor(t, 30*time.Second, "followers to refuse writes and name the leader", func() (bool, string) {
		leader := c.WaitLeader()
		for _, m := range c.Running() {
			if m == leader {
				continue
			}
			_, err := m.Svc.Acquire(context.Background(), api.AcquireRequest{Edge: "e", Region: "eu", MaxNodes: 1})
			if !errors.Is(err, coordinator.ErrNotLeader) {
				return false, fmt.Sprintf("follower %s acquire: %v", m.ID, err)
			}
			if got := m.Svc.LeaderAPIAddress(); got != "http://"+leader.ID+".invalid" {
				return false, fmt.Sprintf("follower %s names leader %q, not %s", m.ID, got, leader.ID)
			}
			st, err := m.Svc.Status(context.Background())
			if err != nil || len(st.Members) != 3 || st.LeaderID != leader.ID {
				return false, fmt.Sprintf("status on %s: %+v %v", m.ID, st, err)
			}
		}
		return true, ""
	})
}

func TestCluster_PauseStopsGrantsAndWakesLongPoll(t *testing.T) {
	c := testcluster.New(t, 1)
	// No periodic recheck: a long poll may only return early because pause or a registration woke it.
	c.Leases.Recheck = time.Hour
	c.Leases.MaxWait = time.Minute
	leader := c.StartAll()
	done := make(chan api.AcquireResponse, 1)
	go func() {
		r, _ := leader.Svc.Acquire(context.Background(), api.AcquireRequest{Edge: "e", Region: "eu", MaxNodes: 5, Wait: api.Duration(20 * time.Second)})
		done <- r
	}()
	if _, err := leader.Svc.Pause(context.Background(), api.PauseRequest{Reason: "maintenance"}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if !r.Paused || r.Lease != nil {
			t.Fatalf("long poll during pause = %+v", r)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("long poll did not return on pause")
	}
	c.Register("eu", "a")
	if r, _ := leader.Svc.Acquire(context.Background(), api.AcquireRequest{Edge: "e", Region: "eu", MaxNodes: 5}); !r.Paused || r.Lease != nil {
		t.Fatalf("acquire while paused = %+v", r)
	}
	if _, err := leader.Svc.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A waiting long poll is woken by a registration in its region.
	go func() {
		r, _ := leader.Svc.Acquire(context.Background(), api.AcquireRequest{Edge: "e", Region: "us", MaxNodes: 5, Wait: api.Duration(20 * time.Second)})
		done <- r
	}()
	c.Register("us", "b")
	select {
	case r := <-done:
		if r.Lease == nil || r.Lease.Nodes[0] != "b" {
			t.Fatalf("long poll = %+v", r)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("long poll not woken by a registration")
	}
}

func TestCluster_RecoverFromLostQuorum(t *testing.T) {
	c := testcluster.New(t, 3)
	c.StartAll()
	c.Register("eu", testcluster.NodeIDs("n", 25)...)
	c.WaitConverged(c.Running()...)
	for _, m := range c.Members {
		c.Stop(m)
	}
	// c2 and c3 are gone for good: c1 alone is made the whole cluster.
	survivor := c.Members[0]
	if err := coordinator.RecoverCluster(coordinator.Config{ID: survivor.ID, DataDir: survivor.Dir, Timeouts: raftnode.LoopbackTimeouts()},
		[]raftnode.Peer{{ID: survivor.ID, Address: survivor.Front.Addr()}}); err != nil {
		t.Fatal(err)
	}
	c.Start(survivor, false)
	c.WaitLeader()
	if counts, _ := survivor.Svc.Ledger().Counts(); counts["eu"][api.StateWaiting] != 25 {
		t.Fatalf("ledger after recovery: %v", counts)
	}
	// A lease only c2 and c3 recorded may still be held: nothing is offered until the hold ends.
	if l := c.Acquire("edge-a", "eu", 5); l != nil {
		t.Fatalf("granted %v during the hold after recovery", l.Nodes)
	}
	c.Clock.Advance(time.Duration(heldStatus(t, survivor).Remaining))
	if l := c.Acquire("edge-a", "eu", 5); l == nil || len(l.Nodes) != 5 {
		t.Fatalf("no grant after the hold: %+v", l)
	}
}

func TestCluster_LongPollTakesNodeWhenItsBackoffEnds(t *testing.T) {
	c := testcluster.New(t, 1)
	leader := c.StartAll()
	c.Register("eu", "a")
	ls := c.Acquire("edge-a", "eu", 1)
	ctx := context.Background()
	if _, err := leader.Svc.Report(ctx, api.ReportRequest{LeaseID: ls.ID, Token: ls.Token, Results: []api.NodeResult{{Identity: "a", Outcome: api.OutcomeFailed, Error: "x"}}}); err != nil {
		t.Fatal(err)
	}
	done := make(chan api.AcquireResponse, 1)
	go func() {
		r, _ := leader.Svc.Acquire(ctx, api.AcquireRequest{Edge: "edge-a", Region: "eu", MaxNodes: 1, Wait: api.Duration(10 * time.Second)})
		done <- r
	}()
	// Nothing changes in the ledger: only the leader's clock passing the backoff makes "a" eligible.
	c.Clock.Advance(c.Leases.Policy.BackoffBase)
	select {
	case r := <-done:
		if r.Lease == nil || r.Lease.Nodes[0] != "a" {
			t.Fatalf("long poll = %+v", r)
		}
	case <-time.After(9 * time.Second):
		t.Fatal("long poll did not pick up a node whose backoff ended")
	}

	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := leader.Svc.Acquire(cctx, api.AcquireRequest{Edge: "edge-a", Region: "none", MaxNodes: 1, Wait: api.Duration(time.Minute)})
		errc <- err
	}()
	cancel()
	if err := testkit.Receive(t, errc, 9*time.Second, "the long poll to end with its context"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled long poll returned %v", err)
	}
}

func TestCluster_LostLedgerFileIsRebuiltFromSnapshotAndLog(t *testing.T) {
	c := testcluster.New(t, 1)
	m := c.StartAll()
	c.Register("eu", testcluster.NodeIDs("a", 30)...)
	if _, err := m.Svc.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Register("eu", testcluster.NodeIDs("b", 20)...)
	want, err := m.Svc.Ledger().Counts()
	if err != nil {
		t.Fatal(err)
	}
	c.Stop(m)
	if err := os.Remove(filepath.Join(m.Dir, "ledger.db")); err != nil {
		t.Fatal(err)
	}
	c.Start(m, false)
	c.WaitLeader()
	testkit.WaitFor(t, testcluster.WaitLimit, "the ledger to be rebuilt", func() bool {
		got, err := m.Svc.Ledger().Counts()
		return err == nil && got["eu"][api.StateWaiting] == want["eu"][api.StateWaiting]
	})
	if _, err := m.Svc.Ledger().Node("b00019"); err != nil {
		t.Fatalf("entry after the snapshot missing: %v", err)
	}
}

// Every answer that carries the pause flag says the log index it holds at, rising with the log:
// an edge orders the answers of its concurrent calls by it.
func TestCluster_AnswersSayTheIndexTheirPauseFlagHoldsAt(t *testing.T) {
	c := testcluster.New(t, 1)
	leader := c.StartAll()
	ctx := context.Background()
	c.Register("eu", "a")
	got, err := leader.Svc.Acquire(ctx, api.AcquireRequest{Edge: "e", Region: "eu", MaxNodes: 1})
	if err != nil || got.Lease == nil {
		t.Fatalf("acquire = %+v, %v", got, err)
	}
	if got.Paused || got.PauseAsOf != got.Lease.Token {
		t.Fatalf("grant's pause flag %t as of %d, want not paused as of its own index %d", got.Paused, got.PauseAsOf, got.Lease.Token)
	}
	if _, err := leader.Svc.Pause(ctx, api.PauseRequest{Reason: "maintenance"}); err != nil {
		t.Fatal(err)
	}
	hb, err := leader.Svc.Heartbeat(ctx, api.HeartbeatRequest{Edge: "e", Region: "eu"})
	if err != nil || !hb.Paused || hb.PauseAsOf <= got.PauseAsOf {
		t.Fatalf("heartbeat after the pause = %+v, %v; want paused as of an index past %d", hb, err, got.PauseAsOf)
	}
	rn, err := leader.Svc.Renew(ctx, api.RenewRequest{LeaseID: got.Lease.ID, Token: got.Lease.Token, Edge: "e", Region: "eu"})
	if err != nil || !rn.Paused || rn.PauseAsOf <= hb.PauseAsOf {
		t.Fatalf("renewal after the heartbeat = paused %t as of %d, %v; want paused as of an index past %d (the renewal's own)", rn.Paused, rn.PauseAsOf, err, hb.PauseAsOf)
	}
	c.Register("eu", "b")
	if r, err := leader.Svc.Acquire(ctx, api.AcquireRequest{Edge: "e", Region: "eu", MaxNodes: 1}); err != nil || !r.Paused || r.PauseAsOf <= rn.PauseAsOf {
		t.Fatalf("acquire while paused = %+v, %v; want paused as of an index past %d", r, err, rn.PauseAsOf)
	}
	if _, err := leader.Svc.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	if hb2, err := leader.Svc.Heartbeat(ctx, api.HeartbeatRequest{Edge: "e", Region: "eu"}); err != nil || hb2.Paused || hb2.PauseAsOf <= hb.PauseAsOf {
		t.Fatalf("heartbeat after the resume = %+v, %v; want not paused as of an index past %d", hb2, err, hb.PauseAsOf)
	}
}
