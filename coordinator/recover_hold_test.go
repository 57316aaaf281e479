// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/internal/testcluster"
	"github.com/seed96588659/muster/coordinator/lessor"
	"github.com/seed96588659/muster/coordinator/raftnode"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// loseMajorityAfterAGrant runs five members, cuts c4 and c5 off, grants n1 to edge-1 on c1..c3
// (acknowledged by that majority only), then loses c1..c3 for good and recovers c4 and c5 as
// the whole cluster: their ledgers never saw the grant that edge-1 holds. Members announce
// protocol announce (0: the newest).
func loseMajorityAfterAGrant(t *testing.T, announce int, opts ...testcluster.Option) *testcluster.Cluster {
	t.Helper()
	return loseMajorityRecoveredWith(t, announce, 0, opts...)
}

// loseMajorityRecoveredWith is loseMajorityAfterAGrant with recover told that a member of the
// cluster ran a lease.ttl of leaseTTL (0: the survivors' own).
func loseMajorityRecoveredWith(t *testing.T, announce int, leaseTTL time.Duration, opts ...testcluster.Option) *testcluster.Cluster {
	t.Helper()
	c := testcluster.New(t, 5, append(opts, testcluster.WithNetem())...)
	if announce > 0 {
		c.Announce = map[string]int{}
		for _, m := range c.Members {
			c.Announce[m.ID] = announce
		}
	}
	c.StartAll()
	c.Register("eu", "n1")
	c.WaitConverged(c.Running()...)
	c.Net.Partition("c4")
	c.Net.Partition("c5")
	testkit.WaitFor(t, testcluster.WaitLimit, "a leader among c1..c3", func() bool {
		l, _ := c.Leader()
		return l != nil && l.ID != "c4" && l.ID != "c5"
	})
	if ls := c.Acquire("edge-1", "eu", 1); ls == nil || len(ls.Nodes) != 1 || ls.Nodes[0] != "n1" {
		t.Fatalf("grant to edge-1 before the loss: %+v", ls)
	}
	for _, m := range c.Members {
		c.Stop(m)
	}
	survivors := []*testcluster.Member{c.Member("c4"), c.Member("c5")}
	var peers []raftnode.Peer
	for _, m := range survivors {
		peers = append(peers, raftnode.Peer{ID: m.ID, Address: m.Front.Addr()})
	}
	for _, m := range survivors {
		if err := coordinator.RecoverCluster(coordinator.Config{ID: m.ID, DataDir: m.Dir, Timeouts: c.Timeouts, Leases: lessor.Config{TTL: leaseTTL}}, peers); err != nil {
			t.Fatal(err)
		}
		c.Net.Heal(m.ID)
	}
	for _, m := range survivors {
		c.Start(m, false)
	}
	c.WaitLeader()
	for _, m := range survivors {
		if n, err := m.Svc.Node(context.Background(), "n1"); err != nil || n.State != api.StateWaiting {
			t.Fatalf("n1 on the survivor %s: %+v %v, want waiting (the grant was lost with the majority)", m.ID, n, err)
		}
	}
	return c
}

// TestCluster_AfterRecoverTheHoldLastsTheLongestLeaseTTLTheOperatorNamed: members may run
// different lease.ttl values, and a lost leader of a longer one told its edge to count that long,
// which no survivor's configuration or log shows (sim seed 461: a 10-second survivor's hold ended
// while an edge still counted a 1-minute renewal the recover lost). recover --lease-ttl names it,
// and the hold lasts at least that TTL, grace and the lock window.
func TestCluster_AfterRecoverTheHoldLastsTheLongestLeaseTTLTheOperatorNamed(t *testing.T) {
	const longest = 10 * time.Minute
	c := loseMajorityRecoveredWith(t, 0, longest)
	if longest <= c.Leases.TTL {
		t.Fatalf("the test needs a TTL above the members' own %s", c.Leases.TTL)
	}
	hold := heldStatus(t, c.WaitLeader())
	if least := longest + c.Leases.Grace + c.Leases.Policy.LockWindow; time.Duration(hold.Remaining) < least {
		t.Fatalf("grants held for %s after recover --lease-ttl %s, want at least %s (TTL, grace, lock window)", time.Duration(hold.Remaining), longest, least)
	}
}

// TestCluster_AfterRecoverALeaseLostWithTheMajorityIsNotGrantedAgainUntilTheHoldEnds: a survivor
// whose ledger lacks the grant edge-1 holds does not offer n1 to edge-2 until edge-1's lease and
// go-choria's lock window have ended on any count (TTL, grace, the lock window), also across a
// change of leader among the survivors during the hold; then it does.
func TestCluster_AfterRecoverALeaseLostWithTheMajorityIsNotGrantedAgainUntilTheHoldEnds(t *testing.T) {
	c := loseMajorityAfterAGrant(t, 0)
	ctx := context.Background()
	if ls := c.Acquire("edge-2", "eu", 1); ls != nil {
		t.Fatalf("edge-2 was granted %v at once after the recover, while edge-1 may still hold it", ls.Nodes)
	}
	leader := c.WaitLeader()
	survivors := c.Running()

	// Status says so, on the leader with what is left, on the other survivor from its ledger.
	hold := heldStatus(t, leader)
	least := c.Leases.TTL + c.Leases.Grace + c.Leases.Policy.LockWindow
	if time.Duration(hold.Remaining) < least {
		t.Fatalf("grants held for %s, want at least TTL+grace+lock window %s", time.Duration(hold.Remaining), least)
	}
	for _, want := range []string{"recover", "c4,c5", "lock window"} {
		if !strings.Contains(hold.Reason, want) {
			t.Errorf("hold reason %q does not say %q", hold.Reason, want)
		}
	}
	c.WaitConverged(survivors...)
	for _, m := range survivors {
		if st, err := m.Svc.Status(ctx); err != nil || st.GrantsHeld == nil || !st.GrantsHeld.Until.Equal(hold.Until) {
			t.Fatalf("status of %s: %+v %v, want grants held until %s", m.ID, st.GrantsHeld, err, hold.Until)
		}
		if _, marked, err := m.Svc.Ledger().Recovered(); err != nil || marked {
			t.Fatalf("%s still carries the recover mark after the hold (%v)", m.ID, err)
		}
	}
	// The event log says so, once.
	var held []api.Event
	if err := leader.Svc.Events(ctx, api.EventPosition{}, api.EventFilter{}, false, func(e api.Event) error {
		if e.Kind == api.EventGrantsHeld {
			held = append(held, e)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(held) != 1 || !strings.Contains(held[0].Reason, hold.Until.UTC().Format(time.RFC3339)) {
		t.Fatalf("grants-held events %+v, want one naming %s", held, hold.Until)
	}

	// Half the hold passes, then leadership moves to the other survivor: the hold stays.
	c.Clock.Advance(time.Duration(hold.Remaining) / 2)
	for try := 0; ; try++ {
		c.Stop(leader)
		// Restarted before the other survivor misses it, the old leader usually wins again:
		// the other still knows a leader and refuses to vote for anyone until it times out.
		for _, m := range c.Running() {
			testkit.WaitFor(t, testcluster.WaitLimit, m.ID+" to miss the stopped leader", func() bool {
				return m.Service() == nil || m.Service().LeaderAPIAddress() == ""
			})
		}
		c.Start(leader, false)
		if l := c.WaitLeader(); l != leader {
			leader = l
			break
		}
		if try == 10 {
			t.Fatalf("leadership stayed on %s through %d restarts", leader.ID, try+1)
		}
	}
	if ls := c.Acquire("edge-2", "eu", 1); ls != nil {
		t.Fatalf("edge-2 was granted %v by %s, the next leader, during the hold", ls.Nodes, leader.ID)
	}
	hold = heldStatus(t, leader)
	c.Clock.Advance(time.Duration(hold.Remaining) - time.Second)
	if ls := c.Acquire("edge-2", "eu", 1); ls != nil {
		t.Fatalf("edge-2 was granted %v a second before the hold ends", ls.Nodes)
	}
	c.Clock.Advance(2 * time.Second)
	if ls := c.Acquire("edge-2", "eu", 1); ls == nil || len(ls.Nodes) != 1 || ls.Nodes[0] != "n1" {
		t.Fatalf("edge-2's acquire after the hold: %+v, want n1", ls)
	}
	if st, err := leader.Svc.Status(ctx); err != nil || st.GrantsHeld != nil {
		t.Fatalf("status after the hold: %+v %v", st.GrantsHeld, err)
	}
}

// heldStatus waits until the leader m's status names a hold on grants and returns it.
func heldStatus(t *testing.T, m *testcluster.Member) api.GrantHold {
	t.Helper()
	var st api.StatusResponse
	testkit.WaitFor(t, testcluster.WaitLimit, "the leader's status to say grants are held", func() bool {
		var err error
		st, err = m.Svc.Status(context.Background())
		return err == nil && st.GrantsHeld != nil && st.GrantsHeld.Remaining > 0
	})
	return *st.GrantsHeld
}

// TestCluster_AfterRecoverEdgesAreToldANewPauseEpoch: the survivors' log may end below indices
// the lost majority reached, so every answer of the recovered cluster carries the epoch of the
// recover's hold, above the 1 of a cluster never recovered (api.PauseMark): an edge takes its
// pause at a lower index than a resume it heard from the lost majority.
func TestCluster_AfterRecoverEdgesAreToldANewPauseEpoch(t *testing.T) {
	c := loseMajorityAfterAGrant(t, 0)
	ctx := context.Background()
	leader := c.WaitLeader()
	heldStatus(t, leader)
	rec, err := leader.Svc.Ledger().Hold()
	if err != nil || rec.At.IsZero() {
		t.Fatalf("the recover's hold in the ledger: %+v %v", rec, err)
	}
	if _, err := leader.Svc.Pause(ctx, api.PauseRequest{Reason: "after the recover"}); err != nil {
		t.Fatal(err)
	}
	hb, err := leader.Svc.Heartbeat(ctx, api.HeartbeatRequest{Edge: "edge-1", Region: "eu"})
	if err != nil {
		t.Fatal(err)
	}
	if !hb.Paused || hb.PauseEpoch != uint64(rec.At.UnixNano()) || hb.PauseEpoch <= 1 {
		t.Fatalf("heartbeat after the recover: paused %t in epoch %d, want paused in the hold's epoch %d", hb.Paused, hb.PauseEpoch, rec.At.UnixNano())
	}
}
