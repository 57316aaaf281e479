// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

func clusterProtocolOf(t testing.TB, m *member) int {
	t.Helper()
	v, err := m.svc.ClusterProtocol()
	if err != nil {
		t.Fatalf("cluster protocol of %s: %v", m.id, err)
	}
	return v
}

// refusedOnLeader runs fn on the leader and returns the error it refused with (nil if it did
// not), following leadership as onLeader does.
func (c *cluster) refusedOnLeader(what string, fn func(*member) error) error {
	c.t.Helper()
	var got error
	c.onLeader(what, func(m *member) error {
		err := fn(m)
		if leadershipError(err) {
			return err
		}
		got = err
		return nil
	})
	return got
}

// nodeOnEvery returns node id as every running member's ledger holds it, failing if they differ.
func (c *cluster) nodeOnEvery(id string) *ledger.Node {
	c.t.Helper()
	c.waitConverged(c.running()...)
	var first *ledger.Node
	for _, m := range c.running() {
		n, err := m.svc.Ledger().Node(id)
		if err != nil {
			c.t.Fatalf("node %s on %s: %v", id, m.id, err)
		}
		if first == nil {
			first = n
			continue
		}
		if n.State != first.State || n.LeaseID != first.LeaseID || n.Attempts != first.Attempts || len(n.History) != len(first.History) {
			c.t.Fatalf("node %s differs on %s: %+v, want %+v", id, m.id, n, first)
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
	c := newCluster(t, 3, false)
	c.serveAPIs()
	c.logs = &testkit.LogBuffer{}
	old := c.members[0]
	c.announce = map[string]int{old.id: 1}
	// The old member bootstraps the cluster, as the members of an existing cluster were all old.
	c.startAll()
	for _, m := range c.running() {
		if v := clusterProtocolOf(t, m); v != 1 {
			t.Fatalf("%s runs cluster protocol %d with an old member, want 1", m.id, v)
		}
	}
	// A member of the new build must decide to hold: move leadership off the old member by
	// restarting it (still old), as an operator's rolling restart would.
	for i := 0; c.waitLeader() == old; i++ {
		if i == 5 {
			t.Fatal("leadership stayed with the old member through 5 restarts")
		}
		c.stop(old)
		c.waitLeader()
		c.start(old, false)
	}
	testkit.WaitFor(t, waitLimit, "the leader to hold the protocol on the old member's answer", func() bool {
		return strings.Contains(c.logs.String(), fmt.Sprintf(`members="c1=1 c2=%d c3=%d"`, ledger.Protocol, ledger.Protocol))
	})
	for _, m := range c.running() {
		if v := clusterProtocolOf(t, m); v != 1 {
			t.Fatalf("%s runs cluster protocol %d with an old member, want 1", m.id, v)
		}
	}

	ids := nodeIDs("node-", 3)
	c.register("eu", ids...)
	ls := c.acquire("edge-a", "eu", 3)
	if ls == nil || len(ls.Nodes) != 3 {
		t.Fatalf("acquire: %+v", ls)
	}
	report := func(results ...api.NodeResult) (api.ReportResponse, error) {
		var resp api.ReportResponse
		err := c.refusedOnLeader("report", func(m *member) error {
			var err error
			resp, err = m.svc.Report(context.Background(), api.ReportRequest{LeaseID: ls.ID, Token: ls.Token, Edge: "edge-a", Region: "eu", Results: results})
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
		if n := c.nodeOnEvery(rj.Identity); n.State != api.StateLeased || n.LeaseID != ls.ID {
			t.Fatalf("%s after a refused %s result: %+v", rj.Identity, outcome, n)
		}
	}
	if n := c.nodeOnEvery(ls.Nodes[2]); n.State != api.StateProvisioned {
		t.Fatalf("%s after its provisioned result at protocol 1: %+v", ls.Nodes[2], n)
	}
	// The operator's retry is refused through the real API with a 409 that says why.
	leaderURL := c.apiAddress(c.waitLeader().id)
	client, err := api.NewClient([]string{leaderURL}, api.WithToken(testAdminToken))
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.Retry(context.Background(), api.RetryRequest{Region: "eu", State: api.StateGone})
	var aerr *api.Error
	if !errors.As(err, &aerr) || aerr.Status != 409 || !strings.Contains(err.Error(), "retry needs cluster protocol 2; the cluster runs 1") {
		t.Fatalf("retry at protocol 1: %v, want 409 naming the protocol", err)
	}

	// The old member is upgraded: restarted on the new build.
	c.stop(old)
	delete(c.announce, old.id)
	c.start(old, false)
	testkit.WaitFor(t, waitLimit, "the newest cluster protocol on every member", func() bool {
		for _, m := range c.running() {
			if v, err := m.svc.ClusterProtocol(); err != nil || v != ledger.Protocol {
				return false
			}
		}
		return len(c.running()) == 3
	})
	if !strings.Contains(c.logs.String(), "cluster protocol raised") {
		t.Errorf("the raise was not logged:\n%s", c.logs.String())
	}
	if resp, err := report(api.NodeResult{Identity: ls.Nodes[0], Outcome: api.OutcomeGone}); err != nil || len(resp.Applied) != 1 {
		t.Fatalf("gone at protocol 2: %+v %v", resp, err)
	}
	if n := c.nodeOnEvery(ls.Nodes[0]); n.State != api.StateGone {
		t.Fatalf("%s after gone at protocol 2: %+v", ls.Nodes[0], n)
	}
	res, err := client.Retry(context.Background(), api.RetryRequest{Nodes: []string{ls.Nodes[0]}})
	if err != nil || len(res.Nodes) != 1 {
		t.Fatalf("retry at protocol 2: %+v %v", res, err)
	}
	if n := c.nodeOnEvery(ls.Nodes[0]); n.State != api.StateWaiting {
		t.Fatalf("%s after retry at protocol 2: %+v", ls.Nodes[0], n)
	}
}

// TestCluster_NewSingleMemberRunsTheNewestProtocolWhenReady: a member alone in its configuration
// has nobody to ask, so it raises the protocol before it calls itself ready; members joined later
// receive it through the log, and one that says it applies less is not let in.
func TestCluster_NewSingleMemberRunsTheNewestProtocolWhenReady(t *testing.T) {
	c := newCluster(t, 2, false)
	c.start(c.members[0], true)
	l := c.waitLeader()
	if err := l.svc.Ready(); err != nil {
		t.Fatalf("leader not ready: %v", err)
	}
	if v := clusterProtocolOf(t, l); v != ledger.Protocol {
		t.Fatalf("ready single member runs cluster protocol %d, want %d", v, ledger.Protocol)
	}
	st, err := l.svc.Status(context.Background())
	if err != nil || st.ClusterProtocol != ledger.Protocol || st.Protocol != ledger.Protocol {
		t.Fatalf("status: protocol %d, cluster protocol %d (%v)", st.Protocol, st.ClusterProtocol, err)
	}
	m := c.members[1]
	c.start(m, false)
	// A member that says it applies less than the cluster runs is refused and left out.
	err = c.refusedOnLeader("join of an older build", func(l *member) error {
		return l.svc.Join(context.Background(), api.JoinRequest{ID: m.id, RaftAddress: m.svc.RaftAddress(), APIAddress: c.apiAddress(m.id), Protocol: 1})
	})
	if !errors.Is(err, ledger.ErrClusterProtocol) || !strings.Contains(err.Error(), fmt.Sprintf("it applies cluster protocol up to 1 and the cluster runs %d", ledger.Protocol)) {
		t.Fatalf("join announcing protocol 1 into a protocol %d cluster: %v", ledger.Protocol, err)
	}
	if st, err := c.waitLeader().svc.Status(context.Background()); err != nil || len(st.Members) != 1 {
		t.Fatalf("members after a refused join: %+v %v", st.Members, err)
	}
	c.onLeader("join", func(l *member) error {
		return l.svc.Join(context.Background(), api.JoinRequest{ID: m.id, RaftAddress: m.svc.RaftAddress(), APIAddress: c.apiAddress(m.id), Protocol: ledger.Protocol})
	})
	c.waitConverged(c.running()...)
	if v := clusterProtocolOf(t, m); v != ledger.Protocol {
		t.Fatalf("joined member runs cluster protocol %d, want %d", v, ledger.Protocol)
	}
}
