// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/seed96588659/muster/coordinator/internal/testcluster"
	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

func clusterProtocolOf(t testing.TB, m *testcluster.Member) int {
	t.Helper()
	v, err := m.Svc.ClusterProtocol()
	if err != nil {
		t.Fatalf("cluster protocol of %s: %v", m.ID, err)
	}
	return v
}

// refusedOnLeader runs fn on the leader and returns the error it refused with (nil if it did
// not), following leadership as onLeader does.
func refusedOnLeader(c *testcluster.Cluster, what string, fn func(*testcluster.Member) error) error {
	c.T().Helper()
	var got error
	c.OnLeader(what, func(m *testcluster.Member) error {
		err := fn(m)
		if testcluster.LeadershipError(err) {
			return err
		}
		got = err
		return nil
	})
	return got
}

// nodeOnEvery returns node id as every running member's ledger holds it, failing if they differ.
func nodeOnEvery(c *testcluster.Cluster, id string) *ledger.Node {
	c.T().Helper()
	c.WaitConverged(c.Running()...)
	var first *ledger.Node
	for _, m := range c.Running() {
		n, err := m.Svc.Ledger().Node(id)
		if err != nil {
			c.T().Fatalf("node %s on %s: %v", id, m.ID, err)
		}
		if first == nil {
			first = n
			continue
		}
		if n.State != first.State || n.LeaseID != first.LeaseID || n.Attempts != first.Attempts || len(n.History) != len(first.History) {
			c.T().Fatalf("node %s differs on %s: %+v, want %+v", id, m.ID, n, first)
		}
	}
	return first
}

// TestCluster_OlderMemberHoldsTheClusterProtocolUntilUpgraded: a cluster with one member of an
// older build (it announces protocol 1) runs protocol 1: a gone or released result is refused by
// name while the rest of its report applies, and a retry is refused with an error that says why;
// every member holds the same ledger. Once
// that member is restarted on the new build the leader raises the protocol on every member and
// both apply.
func TestCluster_OlderMemberHoldsTheClusterProtocolUntilUpgraded(t *testing.T) {
	c := testcluster.New(t, 3, testcluster.WithAPI(nil))
	c.Logs = &testkit.LogBuffer{}
	old := c.Members[0]
	c.Announce = map[string]int{old.ID: 1}
	// The old member bootstraps the cluster, as the members of an existing cluster were all old.
	c.StartAll()
	for _, m := range c.Running() {
		if v := clusterProtocolOf(t, m); v != 1 {
			t.Fatalf("%s runs cluster protocol %d with an old member, want 1", m.ID, v)
		}
	}
	// A member of the new build must decide to hold: move leadership off the old member by
	// restarting it (still old), as an operator's rolling restart would.
	for i := 0; c.WaitLeader() == old; i++ {
		if i == 5 {
			t.Fatal("leadership stayed with the old member through 5 restarts")
		}
		c.Stop(old)
		c.WaitLeader()
		c.Start(old, false)
	}
	testkit.WaitFor(t, testcluster.WaitLimit, "the leader to hold the protocol on the old member's answer", func() bool {
		return strings.Contains(c.Logs.String(), fmt.Sprintf(`members="c1=1 c2=%d c3=%d"`, ledger.Protocol, ledger.Protocol))
	})
	for _, m := range c.Running() {
		if v := clusterProtocolOf(t, m); v != 1 {
			t.Fatalf("%s runs cluster protocol %d with an old member, want 1", m.ID, v)
		}
	}

	ids := testcluster.NodeIDs("node-", 3)
	c.Register("eu", ids...)
	ls := c.Acquire("edge-a", "eu", 3)
	if ls == nil || len(ls.Nodes) != 3 {
		t.Fatalf("acquire: %+v", ls)
	}
	report := func(results ...api.NodeResult) (api.ReportResponse, error) {
		var resp api.ReportResponse
		err := refusedOnLeader(c, "report", func(m *testcluster.Member) error {
			var err error
			resp, err = m.Svc.Report(context.Background(), api.ReportRequest{LeaseID: ls.ID, Token: ls.Token, Edge: "edge-a", Region: "eu", Results: results})
			return err
		})
		return resp, err
	}
	// One report holding a result every member records and two they cannot all record yet: the
	// leader proposes only the first and names the others in Rejected, so neither the edge's
	// provisioned node nor any ledger pays for the outcomes an older member would refuse.
	resp, err := report(api.NodeResult{Identity: ls.Nodes[0], Outcome: api.OutcomeGone},
		api.NodeResult{Identity: ls.Nodes[1], Outcome: api.OutcomeReleased},
		api.NodeResult{Identity: ls.Nodes[2], Outcome: api.OutcomeProvisioned})
	if err != nil {
		t.Fatalf("mixed report at protocol 1: %v", err)
	}
	if len(resp.Applied) != 1 || resp.Applied[0] != ls.Nodes[2] || len(resp.Rejected) != 2 {
		t.Fatalf("mixed report at protocol 1: %+v, want %s applied and two rejected", resp, ls.Nodes[2])
	}
	for i, rj := range resp.Rejected {
		outcome := []api.Outcome{api.OutcomeGone, api.OutcomeReleased}[i]
		want := "outcome " + string(outcome) + " needs cluster protocol 2; the cluster runs 1 until every member is upgraded"
		if rj.Identity != ls.Nodes[i] || !strings.Contains(rj.Reason, want) {
			t.Fatalf("rejected %+v, want %s refused with %q", rj, ls.Nodes[i], want)
		}
		if n := nodeOnEvery(c, rj.Identity); n.State != api.StateLeased || n.LeaseID != ls.ID {
			t.Fatalf("%s after a refused %s result: %+v", rj.Identity, outcome, n)
		}
	}
	if n := nodeOnEvery(c, ls.Nodes[2]); n.State != api.StateProvisioned {
		t.Fatalf("%s after its provisioned result at protocol 1: %+v", ls.Nodes[2], n)
	}
	// The operator's retry is refused through the real API with a 409 that says why.
	leaderURL := c.WaitLeader().URL
	client, err := api.NewClient([]string{leaderURL}, api.WithToken(testcluster.AdminToken))
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.Retry(context.Background(), api.RetryRequest{Region: "eu", State: api.StateGone})
	var aerr *api.Error
	if !errors.As(err, &aerr) || aerr.Status != 409 || !strings.Contains(err.Error(), "retry needs cluster protocol 2; the cluster runs 1") {
		t.Fatalf("retry at protocol 1: %v, want 409 naming the protocol", err)
	}

	// The old member is upgraded: restarted on the new build.
	c.Stop(old)
	delete(c.Announce, old.ID)
	c.Start(old, false)
	testkit.WaitFor(t, testcluster.WaitLimit, "the newest cluster protocol on every member", func() bool {
		for _, m := range c.Running() {
			if v, err := m.Svc.ClusterProtocol(); err != nil || v != ledger.Protocol {
				return false
			}
		}
		return len(c.Running()) == 3
	})
	if !strings.Contains(c.Logs.String(), "cluster protocol raised") {
		t.Errorf("the raise was not logged:\n%s", c.Logs.String())
	}
	if resp, err := report(api.NodeResult{Identity: ls.Nodes[0], Outcome: api.OutcomeGone}); err != nil || len(resp.Applied) != 1 {
		t.Fatalf("gone at protocol 2: %+v %v", resp, err)
	}
	if n := nodeOnEvery(c, ls.Nodes[0]); n.State != api.StateGone {
		t.Fatalf("%s after gone at protocol 2: %+v", ls.Nodes[0], n)
	}
	res, err := client.Retry(context.Background(), api.RetryRequest{Nodes: []string{ls.Nodes[0]}})
	if err != nil || len(res.Nodes) != 1 {
		t.Fatalf("retry at protocol 2: %+v %v", res, err)
	}
	if n := nodeOnEvery(c, ls.Nodes[0]); n.State != api.StateWaiting {
		t.Fatalf("%s after retry at protocol 2: %+v", ls.Nodes[0], n)
	}
}

// TestCluster_NewSingleMemberRunsTheNewestProtocolWhenReady: a member alone in its configuration
// has nobody to ask, so it raises the protocol before it calls itself ready; members joined later
// receive it through the log, and one that says it applies less is not let in.
func TestCluster_NewSingleMemberRunsTheNewestProtocolWhenReady(t *testing.T) {
	c := testcluster.New(t, 2)
	c.Start(c.Members[0], true)
	l := c.WaitLeader()
	// Ready once its state machine has applied what it committed (an entry may still be on its
	// way to the ledger when it leads).
	testkit.WaitFor(t, testcluster.WaitLimit, "the single member ready", func() (bool, string) {
		err := l.Svc.Ready()
		return err == nil, fmt.Sprint(err)
	})
	if v := clusterProtocolOf(t, l); v != ledger.Protocol {
		t.Fatalf("ready single member runs cluster protocol %d, want %d", v, ledger.Protocol)
	}
	st, err := l.Svc.Status(context.Background())
	if err != nil || st.ClusterProtocol != ledger.Protocol || st.Protocol != ledger.Protocol {
		t.Fatalf("status: protocol %d, cluster protocol %d (%v)", st.Protocol, st.ClusterProtocol, err)
	}
	m := c.Members[1]
	c.Start(m, false)
	// A member that says it applies less than the cluster runs is refused and left out.
	err = refusedOnLeader(c, "join of an older build", func(l *testcluster.Member) error {
		_, err := l.Svc.Join(context.Background(), api.JoinRequest{ID: m.ID, RaftAddress: m.Svc.RaftAddress(), APIAddress: m.URL, Protocol: 1})
		return err
	})
	if !errors.Is(err, ledger.ErrClusterProtocol) || !strings.Contains(err.Error(), fmt.Sprintf("it applies cluster protocol up to 1 and the cluster runs %d", ledger.Protocol)) {
		t.Fatalf("join announcing protocol 1 into a protocol %d cluster: %v", ledger.Protocol, err)
	}
	if st, err := c.WaitLeader().Svc.Status(context.Background()); err != nil || len(st.Members) != 1 {
		t.Fatalf("members after a refused join: %+v %v", st.Members, err)
	}
	c.Admit(m)
	c.WaitConverged(c.Running()...)
	if v := clusterProtocolOf(t, m); v != ledger.Protocol {
		t.Fatalf("joined member runs cluster protocol %d, want %d", v, ledger.Protocol)
	}
}
