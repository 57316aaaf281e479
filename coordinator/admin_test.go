// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/internal/testcluster"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// metric returns the value of the sample of name whose labels include want, or -1.
func metric(t testing.TB, reg *prometheus.Registry, name string, want map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for k, v := range want {
				found := false
				for _, lp := range m.GetLabel() {
					if lp.GetName() == k && lp.GetValue() == v {
						found = true
					}
				}
				if !found {
					continue next
				}
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return -1
}

func TestService_AdminReadsMembershipAndMetrics(t *testing.T) {
	c := testcluster.New(t, 3)
	c.StartAll()
	c.Register("eu", testcluster.NodeIDs("n", 12)...)
	c.Register("us", testcluster.NodeIDs("u", 3)...)
	ls := c.Acquire("edge-a", "eu", 4)
	ctx := context.Background()
	c.Report(api.ReportRequest{LeaseID: ls.ID, Token: ls.Token, Results: []api.NodeResult{
		{Identity: ls.Nodes[0], Outcome: api.OutcomeProvisioned}, {Identity: "n00011", Outcome: api.OutcomeProvisioned}}})
	c.OnLeader("report with a wrong token", func(m *testcluster.Member) error {
		_, err := m.Svc.Report(ctx, api.ReportRequest{LeaseID: ls.ID, Token: ls.Token + 1, Results: []api.NodeResult{{Identity: ls.Nodes[1], Outcome: api.OutcomeFailed}}})
		if errors.Is(err, coordinator.ErrTokenMismatch) {
			return nil
		}
		if err == nil {
			return errors.New("accepted")
		}
		return err
	})
	c.WaitConverged(c.Running()...)

	leader := c.WaitLeader()
	st, err := leader.Svc.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Regions["eu"][api.StateWaiting] != 8 || st.Regions["eu"][api.StateLeased] != 3 || st.Regions["eu"][api.StateProvisioned] != 1 || st.Regions["us"][api.StateWaiting] != 3 || st.LeasesActive != 1 {
		t.Fatalf("status = %+v", st)
	}

	page, err := leader.Svc.Nodes(ctx, api.NodeFilter{Region: "eu", Limit: 5})
	if err != nil || len(page.Nodes) != 5 || page.Next != "n00004" {
		t.Fatalf("first page = %d nodes, next %q, %v", len(page.Nodes), page.Next, err)
	}
	rest, _ := leader.Svc.Nodes(ctx, api.NodeFilter{Region: "eu", After: page.Next, Limit: 100})
	if len(rest.Nodes) != 7 || rest.Next != "" {
		t.Fatalf("second page = %d nodes, next %q", len(rest.Nodes), rest.Next)
	}
	n, err := leader.Svc.Node(ctx, ls.Nodes[0])
	if err != nil || n.State != api.StateProvisioned || len(n.History) != 3 || n.History[2].LeaseToken != ls.Token {
		t.Fatalf("node with history = %+v, %v", n, err)
	}
	if _, err := leader.Svc.Node(ctx, "nope"); !errors.Is(err, coordinator.ErrUnknownNode) {
		t.Fatalf("unknown node: %v", err)
	}

	var hb api.HeartbeatResponse
	hbLeader := c.OnLeader("heartbeat", func(m *testcluster.Member) error {
		hb, err = m.Svc.Heartbeat(ctx, api.HeartbeatRequest{Edge: "edge-a", Region: "eu", Leases: []string{ls.ID}})
		return err
	})
	if hb.Paused || hb.Time.IsZero() {
		t.Fatalf("heartbeat = %+v", hb)
	}
	if _, ok := hbLeader.Svc.Edges()["edge-a"]; !ok {
		t.Fatal("heartbeat not recorded")
	}

	// Counters are per member: sum them, since leadership may have moved on a loaded machine.
	sum := func(name string, labels map[string]string) float64 {
		var s float64
		for _, m := range c.Running() {
			s += max(metric(t, m.Reg, name, labels), 0)
		}
		return s
	}
	for k, want := range map[string]float64{
		"muster_coordinator_lease_grants_total":  1,
		"muster_coordinator_stale_reports_total": 2, // one rejected result (node not in lease) + one under a wrong token
	} {
		if got := sum(k, nil); got != want {
			t.Errorf("%s summed over members = %v, want %v", k, got, want)
		}
	}
	// Two members may both claim leadership for a moment during an election: wait for one.
	testkit.WaitFor(t, testcluster.WaitLimit, "exactly one member's leader gauge at 1", func() bool { return sum("muster_coordinator_leader", nil) == 1 })
	if got := sum("muster_coordinator_apply_seconds", map[string]string{"command": "grant"}); got < 1 {
		t.Errorf("apply latency of grants not observed: %v", got)
	}
	if got := metric(t, leader.Reg, "muster_coordinator_leases_active", nil); got != 1 {
		t.Errorf("leases_active = %v", got)
	}
	if got := metric(t, leader.Reg, "muster_coordinator_ledger_nodes", map[string]string{"region": "eu", "state": "waiting"}); got != 8 {
		t.Errorf("ledger_nodes{eu,waiting} = %v", got)
	}
	if got := metric(t, leader.Reg, "muster_coordinator_applied_index", nil); got < 5 {
		t.Errorf("applied index gauge %v", got)
	}

	// Remove a follower: the configuration and its API address go away.
	var follower *testcluster.Member
	for _, m := range c.Running() {
		if m != leader {
			follower = m
		}
	}
	if _, err := follower.Svc.Heartbeat(ctx, api.HeartbeatRequest{Edge: "e"}); !errors.Is(err, coordinator.ErrNotLeader) {
		t.Fatalf("heartbeat on a follower: %v", err)
	}
	if got := metric(t, follower.Reg, "muster_coordinator_leader", nil); got != 0 {
		t.Fatalf("follower leader gauge %v", got)
	}
	c.OnLeader("remove", func(m *testcluster.Member) error { return m.Svc.Remove(ctx, api.RemoveRequest{ID: follower.ID}) })
	c.OnLeader("remove unknown", func(m *testcluster.Member) error {
		err := m.Svc.Remove(ctx, api.RemoveRequest{ID: "ghost"})
		if errors.Is(err, coordinator.ErrBadRequest) {
			return nil
		}
		return err
	})
	testkit.WaitFor(t, testcluster.WaitLimit, "the member to leave the configuration", func() bool {
		st, err := c.WaitLeader().Svc.Status(ctx)
		return err == nil && len(st.Members) == 2
	})
	c.Stop(follower)
	if l := c.Acquire("edge-b", "us", 3); l == nil {
		t.Fatal("two-member cluster does not grant")
	}
}

// TestService_BadNodesOfARegisterAreRefusedAloneByName: an empty identity, and a node leased in
// another region, are refused by name; the other node of each request is recorded and the leased
// node is left as it was.
func TestService_BadNodesOfARegisterAreRefusedAloneByName(t *testing.T) {
	c := testcluster.New(t, 1)
	leader := c.StartAll()
	c.Register("eu", "a")
	c.Acquire("edge-a", "eu", 1)
	for _, tc := range []struct {
		req      api.RegisterRequest
		bad, why string
	}{
		{api.RegisterRequest{Region: "eu", Edge: "e", Nodes: []api.RegisterNode{{Identity: "ok1"}, {Identity: ""}}}, "", "nodes[1].identity: must not be empty"},
		{api.RegisterRequest{Region: "us", Edge: "e", Nodes: []api.RegisterNode{{Identity: "ok2"}, {Identity: "a"}}}, "a", "node a is in region eu, not us"},
	} {
		resp, err := leader.Svc.Register(context.Background(), tc.req)
		if err != nil || resp.Added != 1 || len(resp.Rejected) != 1 || resp.Rejected[0].Identity != tc.bad || !strings.Contains(resp.Rejected[0].Reason, tc.why) {
			t.Fatalf("register %+v: %+v %v; want one added and %q refused with %q", tc.req, resp, err, tc.bad, tc.why)
		}
	}
	if n := nodeOnEvery(c, "a"); n.Region != "eu" || n.State != api.StateLeased {
		t.Fatalf("the leased node after another region's register: %+v", n)
	}
	for _, id := range []string{"ok1", "ok2"} {
		if _, err := leader.Svc.Node(context.Background(), id); err != nil {
			t.Fatalf("%s not recorded beside the refused node: %v", id, err)
		}
	}
}

// TestService_JoinNamingTheLeaderItselfIsRefused: a join that reuses the leader's id with another
// address, or the leader's address with another id, would replace the leader in the configuration
// (a member that comes back with a new address is replaced): it is refused and nothing changes.
func TestService_JoinNamingTheLeaderItselfIsRefused(t *testing.T) {
	c := testcluster.New(t, 3)
	c.StartAll()
	ctx := context.Background()
	for _, sameID := range []bool{true, false} {
		c.OnLeader("join naming the leader", func(m *testcluster.Member) error {
			req := api.JoinRequest{ID: m.ID, RaftAddress: "127.0.0.1:1", APIAddress: "http://elsewhere.invalid"}
			if !sameID {
				req = api.JoinRequest{ID: "c9", RaftAddress: m.Svc.RaftAddress(), APIAddress: "http://c9.invalid"}
			}
			_, err := m.Svc.Join(ctx, req)
			if errors.Is(err, coordinator.ErrBadRequest) {
				return nil
			}
			if err == nil {
				return fmt.Errorf("join %+v on %s accepted", req, m.ID)
			}
			return err
		})
	}
	st, err := c.WaitLeader().Svc.Status(ctx)
	if err != nil || len(st.Members) != 3 {
		t.Fatalf("members after refused joins: %+v %v", st.Members, err)
	}
	for _, sm := range st.Members {
		if m := c.Member(sm.ID); m == nil || sm.RaftAddress != m.Front.Addr() {
			t.Fatalf("member %+v changed", sm)
		}
	}
}
