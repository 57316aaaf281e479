// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/internal/testcluster"
	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// heldOn reads node id on member m's own ledger.
func heldOn(t *testing.T, m *testcluster.Member, id string) *ledger.Node {
	t.Helper()
	n, err := m.Svc.Ledger().Node(id)
	if err != nil {
		t.Fatalf("%s on %s: %v", id, m.ID, err)
	}
	return n
}

// TestService_TheLeadersApprovalPolicyIsStampedAndEveryMemberHoldsAlike: the members' approval
// keys differ (c1 holds eu's first-seen nodes, c2 and c3 hold nothing); what a registration holds
// is what its leader's policy says, on every member alike (identical digests), and a new leader
// applies its own. A duplicate responder's result holds its node on every member; approve (named,
// then --all of a region) sends held nodes back to waiting through the log.
func TestService_TheLeadersApprovalPolicyIsStampedAndEveryMemberHoldsAlike(t *testing.T) {
	c := testcluster.New(t, 3)
	c.EditConfig = func(cfg *coordinator.Config) {
		if cfg.ID == "c1" {
			cfg.Approval = &ledger.Approval{Manual: []string{"eu"}}
		}
	}
	leader := c.StartAll()
	if leader.ID != "c1" {
		t.Fatalf("leader %s, want c1 (the member that bootstraps)", leader.ID)
	}
	if r := c.Register("eu", "eu-1", "eu-2", "eu-3"); r.Added != 3 || !slices.Equal(r.Final, []string{"eu-1", "eu-2", "eu-3"}) {
		t.Fatalf("register in eu: %+v", r)
	}
	c.Register("us", "us-1")
	c.WaitConverged(c.Running()...)
	for _, m := range c.Running() {
		if n := heldOn(t, m, "eu-1"); n.State != api.StateHeld || n.HoldReason != api.HoldManual || n.HoldEdge != "edge-a" {
			t.Fatalf("eu-1 on %s: %+v", m.ID, n)
		}
		if n := heldOn(t, m, "us-1"); n.State != api.StateWaiting {
			t.Fatalf("us-1 on %s: %s", m.ID, n.State)
		}
	}
	if l := c.Acquire("edge-a", "eu", 10); l != nil {
		t.Fatalf("held nodes were leased: %+v", l)
	}
	// Every member tells how long eu's oldest hold has waited (the held-too-long alert), none
	// for a region that holds nothing.
	for _, m := range c.Running() {
		if age := metric(t, m.Reg, "muster_coordinator_ledger_held_oldest_seconds", map[string]string{"region": "eu"}); age < 0 || age > 3600 {
			t.Fatalf("held_oldest_seconds{eu} on %s = %v", m.ID, age)
		}
		if n := countSeries(t, m.Reg, "muster_coordinator_ledger_held_oldest_seconds"); n != 1 {
			t.Fatalf("held_oldest_seconds on %s has %d regions, want eu alone", m.ID, n)
		}
	}

	// A second responder seen under a lease holds the node on every member.
	l := c.Acquire("edge-a", "us", 10)
	if l == nil || !slices.Equal(l.Nodes, []string{"us-1"}) {
		t.Fatalf("acquire in us: %+v", l)
	}
	dup := api.DuplicateResponderPrefix + " a second responder answered configure for us-1; nothing it returned is used"
	if r := c.Report(api.ReportRequest{LeaseID: l.ID, Token: l.Token, Edge: "edge-a", Region: "us", Results: []api.NodeResult{{Identity: "us-1", Outcome: api.OutcomeFailed, Error: dup}}}); len(r.Applied) != 1 {
		t.Fatalf("report: %+v", r)
	}
	c.WaitConverged(c.Running()...)
	for _, m := range c.Running() {
		if n := heldOn(t, m, "us-1"); n.State != api.StateHeld || n.HoldReason != api.HoldDuplicateResponder || n.HoldDetail != dup {
			t.Fatalf("us-1 on %s: %+v", m.ID, n)
		}
	}

	// Named approve through the leader.
	_, svc := c.Leader()
	resp, err := svc.Operate(context.Background(), api.OperatorRequest{Verb: api.VerbApprove, Nodes: []string{"eu-1", "us-1"}, By: "alice"})
	if err != nil || !slices.Equal(resp.Done, []string{"eu-1", "us-1"}) {
		t.Fatalf("approve: %+v %v", resp, err)
	}

	// A new leader without a policy holds no new node; approve --all takes the rest of eu.
	c.Stop(leader)
	next := c.WaitLeader()
	c.Register("eu", "eu-4")
	_, svc = c.Leader()
	resp, err = svc.Operate(context.Background(), api.OperatorRequest{Verb: api.VerbApprove, Region: "eu", All: true, Reason: "rack 12 racked today", By: "alice"})
	if err != nil || !slices.Equal(resp.Done, []string{"eu-2", "eu-3"}) {
		t.Fatalf("approve --all in eu: %+v %v", resp, err)
	}
	if _, err := svc.Operate(context.Background(), api.OperatorRequest{Verb: api.VerbApprove, Region: "eux", All: true, Reason: "x", By: "alice"}); err == nil || !strings.Contains(err.Error(), `no node of the ledger is in region "eux"`) {
		t.Fatalf("approve --all of an unknown region: %v", err)
	}
	c.WaitConverged(c.Running()...)
	for _, m := range c.Running() {
		for _, id := range []string{"eu-1", "eu-2", "eu-3", "eu-4", "us-1"} {
			if n := heldOn(t, m, id); n.State != api.StateWaiting {
				t.Fatalf("%s on %s after %s led: %+v", id, m.ID, next.ID, n)
			}
		}
		if n := heldOn(t, m, "eu-2"); !strings.Contains(n.History[len(n.History)-1].Reason, "approved by alice (held: manual): rack 12 racked today") {
			t.Fatalf("eu-2's history on %s: %+v", m.ID, n.History)
		}
	}
	// Approved inside edge-a's lock window, us-1 is offered to no other edge before it ends.
	if l := c.Acquire("edge-b", "us", 10); l != nil {
		t.Fatalf("us-1 was leased to edge-b inside edge-a's lock window: %+v", l)
	}
	c.Clock.Advance(c.Leases.Policy.LockWindow + time.Second)
	testkit.WaitFor(t, testcluster.WaitLimit, "us-1 offered after the window", func() bool {
		l := c.Acquire("edge-b", "us", 10)
		return l != nil && slices.Equal(l.Nodes, []string{"us-1"})
	})
}

// countSeries is how many series of metric name reg gathers.
func countSeries(t testing.TB, reg *prometheus.Registry, name string) int {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return len(mf.GetMetric())
		}
	}
	return 0
}
