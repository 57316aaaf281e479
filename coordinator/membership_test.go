// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/internal/testcluster"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// TestMembership_WipedMemberDoesNotVoteUntilPromoted is the sequence of a StatefulSet that lost
// a volume: c2 lags, c1 grants n1 to edge-1 with c3's acknowledgement, c3 comes back with an
// empty data directory under its old id and address, c1 fails. c2 and the empty c3 must not
// elect a leader (c2's log lacks the grant); once c1 is back the cluster takes c3 in as a
// learner and promotes it, and n1 is never granted to another edge.
func TestMembership_WipedMemberDoesNotVoteUntilPromoted(t *testing.T) {
	c := testcluster.New(t, 3, testcluster.WithNetem())
	c.Logs = &testkit.LogBuffer{}
	c.LogLevel = 0 // info: raft's own error lines name the refused votes
	c.StartAll()
	c1, c2, c3 := c.Members[0], c.Members[1], c.Members[2]
	c.Register("eu", "n1")
	c.WaitConverged(c.Running()...)

	// c2 lags: whatever leads now (c1 or c3) commits with the other's acknowledgement.
	c.Net.Partition(c2.ID)
	grant := c.Acquire("edge-1", "eu", 1)
	if grant == nil || len(grant.Nodes) != 1 {
		t.Fatalf("first grant = %+v", grant)
	}
	leader := c.WaitLeader()
	if leader == c2 {
		t.Fatalf("the lagging member leads")
	}
	other := c1
	if leader == c1 {
		other = c3
	}
	// The member that acknowledged the grant (not the leader) loses its disk; the leader fails
	// before it can copy its log to the empty member again.
	wiped := other
	c.Stop(wiped)
	c.Stop(leader)
	if err := os.RemoveAll(wiped.Dir); err != nil {
		t.Fatal(err)
	}
	c.Net.Heal(c2.ID)
	c.Start(wiped, false)

	// c2 campaigns; the empty member must refuse every vote (and pre-vote) it is asked for.
	refused := "has no vote yet"
	testkit.WaitFor(t, testcluster.WaitLimit, "c2 to be refused votes, or a leader", func() bool {
		l, _ := c.Leader()
		return l != nil || strings.Count(c.Logs.String(), refused) >= 3
	})
	if l, _ := c.Leader(); l != nil {
		second := c.Acquire("edge-2", "eu", 1)
		t.Fatalf("%s was elected with the vote of the empty %s; n1 granted to edge-1 (%+v) is granted to edge-2 again: %+v", l.ID, wiped.ID, grant, second)
	}

	// The failed leader comes back: the two members that hold every acknowledged write elect a
	// leader and the empty member is taken in as a learner, then promoted.
	c.Start(leader, false)
	c.WaitLeader()
	c.Admit(wiped)
	c.WaitConverged(c.Running()...)
	if !c.IsVoter(wiped) {
		t.Fatalf("%s is not a voter after its admission", wiped.ID)
	}
	if wiped.Svc.Learner() {
		t.Fatalf("%s still refuses votes after its promotion", wiped.ID)
	}
	if n, err := wiped.Svc.Ledger().Node("n1"); err != nil || n.Edge != "edge-1" {
		t.Fatalf("n1 on the re-admitted member = %+v, %v; want it leased to edge-1", n, err)
	}
	if l := c.Acquire("edge-2", "eu", 1); l != nil {
		t.Fatalf("n1 granted twice: edge-1 %+v and edge-2 %+v", grant, l)
	}
}

// TestMembership_StatelessMemberWithoutJoinRefusesToStart: an empty data directory with neither
// bootstrap nor join cannot tell a new member from one that lost its disk; it says how to rejoin.
func TestMembership_StatelessMemberWithoutJoinRefusesToStart(t *testing.T) {
	dir := t.TempDir()
	svc, err := coordinator.New(coordinator.Config{ID: "c3", DataDir: dir, RaftBind: "127.0.0.1:0", LedgerNoSync: true})
	if err == nil {
		svc.Close()
		t.Fatal("a member with no Raft state, no bootstrap and no join started")
	}
	for _, want := range []string{"c3", "no Raft state", "--join"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not name %q", err, want)
		}
	}
}

// TestMembership_JoinRefusesAnotherClustersDataDir starts cluster A's c3 on cluster B's data
// directory and joins it to A: the leader refuses, naming both clusters, and changes nothing.
func TestMembership_JoinRefusesAnotherClustersDataDir(t *testing.T) {
	a := testcluster.New(t, 3)
	b := testcluster.New(t, 3)
	a.Start(a.Members[0], true)
	a.WaitLeader()
	a.Start(a.Members[1], false)
	a.Admit(a.Members[1])
	b.StartAll()
	b.Register("eu", "b-node")
	b.WaitConverged(b.Running()...)
	b.Stop(b.Members[2])
	if err := os.Rename(b.Members[2].Dir, a.Members[2].Dir); err != nil {
		t.Fatal(err)
	}
	j := a.Members[2]
	a.Start(j, false)
	idA, idB := clusterIDOf(t, a), clusterIDOf(t, b)
	req, err := j.Svc.JoinRequest()
	if err != nil || req.ClusterID != idB {
		t.Fatalf("join request of %s on cluster B's directory: %+v, %v; want cluster id %s", j.ID, req, err, idB)
	}
	before := a.WaitLeader().Svc.Ledger()
	beforeApplied, _, _ := before.AppliedIndex()
	var joinErr error
	a.OnLeader("join c3", func(l *testcluster.Member) error {
		_, joinErr = l.Svc.Join(context.Background(), req)
		if testcluster.LeadershipError(joinErr) {
			return joinErr
		}
		return nil
	})
	if joinErr == nil {
		t.Fatalf("%s on cluster B's data directory joined cluster A", j.ID)
	}
	if !errors.Is(joinErr, coordinator.ErrOtherCluster) || !strings.Contains(joinErr.Error(), idA) || !strings.Contains(joinErr.Error(), idB) {
		t.Fatalf("join refused with %v; want ErrOtherCluster naming %s and %s", joinErr, idA, idB)
	}
	if st, err := a.WaitLeader().Svc.Status(context.Background()); err != nil || len(st.Members) != 2 {
		t.Fatalf("cluster A's members after the refused join: %+v, %v", st.Members, err)
	}
	if after, _, _ := before.AppliedIndex(); after != beforeApplied {
		t.Fatalf("the refused join wrote to the log: applied %d -> %d", beforeApplied, after)
	}
	// The member refuses too when a leader answers for another cluster.
	if _, err := j.Svc.Joined(req, api.JoinResponse{Voter: true, ConfigIndex: 9, ClusterID: idA}); !errors.Is(err, coordinator.ErrOtherCluster) {
		t.Fatalf("an answer from cluster %s to a member of %s: %v", idA, idB, err)
	}
}

// clusterIDOf waits until c's leader has named its cluster and returns the id.
func clusterIDOf(t *testing.T, c *testcluster.Cluster) string {
	t.Helper()
	var id string
	testkit.WaitFor(t, testcluster.WaitLimit, "the cluster to be named", func() bool {
		l, svc := c.Leader()
		if l == nil {
			return false
		}
		id, _ = svc.ClusterID()
		return id != ""
	})
	return id
}

// TestMembership_LostPromotionAnswerAfterWholeClusterRestart: the leader commits the promotions
// of c2 and c3 but neither receives the "Voter" answer (the whole cluster is stopped right after
// the members joined, as an operator's first restart does). Both still hold raft-learner.json;
// each one's own log holds its promotion. After every member restarts from its directory a
// leader must be elected (on the old code c1 alone campaigned for ever: "member c2 has no vote
// yet"), and the ledger holds every write.
func TestMembership_LostPromotionAnswerAfterWholeClusterRestart(t *testing.T) {
	c := testcluster.New(t, 3)
	c.Start(c.Members[0], true)
	c.WaitLeader()
	since := map[string]uint64{}
	for _, m := range c.Members[1:] {
		c.Start(m, false)
		since[m.ID] = admitLosingTheVoterAnswer(t, c, m).LearnerSince
	}
	nodes := testcluster.NodeIDs("n", 5)
	c.Register("eu", nodes...)
	c.WaitConverged(c.Running()...)
	c.CloseAll()
	// Each former learner is stopped as it was when the answer was lost: still gated, told it
	// is a non-voter at since (had it seen its promotion in its own log before the stop, its
	// file would be gone; put back, it is the state of a stop one moment earlier).
	for _, m := range c.Members[1:] {
		writeLearnerFile(t, m.Dir, since[m.ID])
	}
	for _, m := range c.Members {
		c.Start(m, false)
	}
	testkit.WaitFor(t, testcluster.WaitLimit, "a leader after restarting every member", func() (bool, string) {
		l, _ := c.Leader()
		return l != nil, fmt.Sprintf("learners c2=%v c3=%v", c.Members[1].Svc.Learner(), c.Members[2].Svc.Learner())
	})
	c.WaitConverged(c.Running()...)
	for _, m := range c.Members {
		for _, id := range nodes {
			if n, err := m.Svc.Ledger().Node(id); err != nil || n == nil {
				t.Fatalf("%s lost %s across the restart: %+v, %v", m.ID, id, n, err)
			}
		}
	}
	testkit.WaitFor(t, testcluster.WaitLimit, "both former learners to vote again", func() bool {
		return !c.Members[1].Svc.Learner() && !c.Members[2].Svc.Learner()
	})
}

// TestMembership_LostPromotionAnswerWhileRunning: a learner whose promotion committed but whose
// "Voter" answer was lost (its leader died before answering) is told it is a voter when it asks
// again (on the old code the leader read its configuration's index as 0 and demoted it), and
// opens its vote on its own once its log holds the promotion, without asking.
func TestMembership_LostPromotionAnswerWhileRunning(t *testing.T) {
	c := testcluster.New(t, 3)
	c.Logs = &testkit.LogBuffer{}
	c.LogLevel = 0
	c.Start(c.Members[0], true)
	c.WaitLeader()
	c.Start(c.Members[1], false)
	c.Admit(c.Members[1])
	c3 := c.Members[2]
	c.Start(c3, false)
	req := admitLosingTheVoterAnswer(t, c, c3)
	var resp api.JoinResponse
	c.OnLeader("ask again", func(l *testcluster.Member) (err error) {
		resp, err = l.Svc.Join(context.Background(), req)
		return err
	})
	if !resp.Voter || resp.ConfigIndex <= req.LearnerSince || !c.IsVoter(c3) {
		t.Fatalf("the same learner request again after its promotion: %+v (voter in the leader's configuration: %v); want the voter answer of a configuration after %d",
			resp, c.IsVoter(c3), req.LearnerSince)
	}
	testkit.WaitFor(t, testcluster.WaitLimit, c3.ID+" to vote once its log holds its promotion", func() bool {
		return !c3.Svc.Learner()
	})
	if !strings.Contains(c.Logs.String(), "promotion seen in this member's own log") {
		t.Fatalf("%s opened its vote without saying why", c3.ID)
	}
	if _, err := os.Stat(filepath.Join(c3.Dir, "raft-learner.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("raft-learner.json of %s after its gate opened: %v", c3.ID, err)
	}
}

// TestMembership_LearnerNeverToldItIsANonVoterStaysGated: a gated member the leader has not yet
// named a non-voter (since 0) keeps its gate closed although its own log lists it as a voter:
// that configuration may predate the loss of its state.
func TestMembership_LearnerNeverToldItIsANonVoterStaysGated(t *testing.T) {
	c := testcluster.New(t, 3)
	c.StartAll()
	c3 := c.Members[2]
	c.Stop(c3)
	writeLearnerFile(t, c3.Dir, 0)
	c.Start(c3, false)
	if !c3.Svc.Learner() {
		t.Fatalf("%s opened its vote at start with since 0", c3.ID)
	}
	c.Register("eu", "n1")
	c.WaitConverged(c.Running()...)
	if !c3.Svc.Learner() {
		t.Fatalf("%s opened its vote with since 0 because its log lists it as a voter", c3.ID)
	}
}

// admitLosingTheVoterAnswer asks the leader to take m in, as serve's join does, until the leader
// answers that m is a voter; that answer never reaches m. It returns m's last request, which
// names the configuration index at which the leader named m a non-voter.
func admitLosingTheVoterAnswer(t *testing.T, c *testcluster.Cluster, m *testcluster.Member) api.JoinRequest {
	t.Helper()
	var last api.JoinRequest
	testkit.WaitFor(t, testcluster.WaitLimit, m.ID+"'s promotion", func() bool {
		req, err := m.Svc.JoinRequest()
		if err != nil {
			t.Fatalf("join request of %s: %v", m.ID, err)
		}
		last = req
		_, lsvc := c.Leader()
		if lsvc == nil {
			return false
		}
		resp, err := lsvc.Join(context.Background(), req)
		if err != nil {
			if !testcluster.LeadershipError(err) && !errors.Is(err, coordinator.ErrTimeout) {
				t.Fatalf("join %s: %v", m.ID, err)
			}
			return false
		}
		if resp.Voter {
			return true // lost on its way
		}
		if _, err := m.Svc.Joined(req, resp); err != nil {
			t.Fatalf("join %s: %v", m.ID, err)
		}
		return false
	})
	if !last.Learner || last.LearnerSince == 0 || !c.IsVoter(m) {
		t.Fatalf("%s after its lost promotion answer: request %+v, voter %v", m.ID, last, c.IsVoter(m))
	}
	return last
}

// writeLearnerFile puts back a member's vote gate as raftnode keeps it: closed, named a
// non-voter at since.
func writeLearnerFile(t *testing.T, dir string, since uint64) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "raft-learner.json"), fmt.Appendf(nil, `{"since":%d}`, since), 0o600); err != nil {
		t.Fatal(err)
	}
}
