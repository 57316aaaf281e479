// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// TestE2E_WholeClusterRestartKeepsTheLedger stops every member with SIGTERM, starts them again
// with the same flags (bootstrap and join included), and finds the same ledger and a lease that
// still renews under its token.
func TestE2E_WholeClusterRestartKeepsTheLedger(t *testing.T) {
	r := startReportedLease(t)
	c, ctx, first := r.c, r.ctx, r.c.procs[0]

	c.sigtermAll(t)
	c.relaunch(c.procs[0], true, "")
	c.relaunch(c.procs[1], false, first.apiURL)
	c.relaunch(c.procs[2], false, first.apiURL)
	c.waitLeader(t, c.addrs(""), 3, "")

	after, err := leaderNodes(ctx, r.admin, api.NodeFilter{Region: "fra", Limit: 100}, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	sameNodes(t, r.before, after)
	if _, err := r.edge.Renew(ctx, api.RenewRequest{LeaseID: r.lease.ID, Token: r.lease.Token, Edge: "e1", Region: "fra"}); err != nil {
		t.Fatalf("renew of the lease granted before the restart: %v", err)
	}
}

// TestE2E_ReadWithoutALeaderIsNotTheLeaders restarts one member of three first: until a leader
// is ready a member answers a listing from its own copy, marked stale, and that copy may lack
// what the leader acknowledged. A read that must hold every acknowledged write waits for the
// leader's own answer.
func TestE2E_ReadWithoutALeaderIsNotTheLeaders(t *testing.T) {
	r := startReportedLease(t)
	c, ctx, first := r.c, r.ctx, r.c.procs[0]
	f := api.NodeFilter{Region: "fra", Limit: 100}

	c.sigtermAll(t)
	c.relaunch(c.procs[1], false, first.apiURL)
	if !c.listening(c.procs[1]) {
		t.Fatal("c2 did not start")
	}
	// One voter of three: no leader can be elected, every answer is c2's own copy.
	if got, err := leaderNodes(ctx, r.admin, f, 2*time.Second); err == nil {
		t.Fatalf("a listing answered without a leader was taken for the leader's (stale %+v)", got.Stale)
	} else {
		t.Logf("without a leader: %v", err)
	}

	c.relaunch(c.procs[0], true, "")
	c.relaunch(c.procs[2], false, first.apiURL)
	after, err := leaderNodes(ctx, r.admin, f, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	sameNodes(t, r.before, after)
}

// reportedLease is a cluster of three whose edge e1 holds a lease with one node reported
// provisioned and one failed, and the leader's listing of region fra after the report.
type reportedLease struct {
	c      *e2eCluster
	ctx    context.Context
	edge   *api.Client
	admin  *api.Client
	lease  *api.Lease
	before api.NodesResponse
}

// startReportedLease starts three members with 20 nodes in region fra, leases five to edge e1
// and reports the first provisioned and the second failed.
func startReportedLease(t *testing.T) reportedLease {
	t.Helper()
	c, edge, ctx := startThreeWithNodes(t, "fra", "r", 20)
	admin, _ := api.NewClient(c.apiURLs(""), api.WithToken(e2eAdminToken))
	got, err := edge.Acquire(ctx, api.AcquireRequest{Edge: "e1", Region: "fra", MaxNodes: 5})
	if err != nil || got.Lease == nil {
		t.Fatalf("acquire: %+v %v", got, err)
	}
	ls := got.Lease
	if _, err := edge.Report(ctx, api.ReportRequest{LeaseID: ls.ID, Token: ls.Token, Edge: "e1", Region: "fra", Results: []api.NodeResult{
		{Identity: ls.Nodes[0], Outcome: api.OutcomeProvisioned}, {Identity: ls.Nodes[1], Outcome: api.OutcomeFailed, Error: "inventory timed out"},
	}}); err != nil {
		t.Fatal(err)
	}
	before, err := leaderNodes(ctx, admin, api.NodeFilter{Region: "fra", Limit: 100}, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return reportedLease{c: c, ctx: ctx, edge: edge, admin: admin, lease: ls, before: before}
}

// sigtermAll stops every member with SIGTERM and checks that each exits 0.
func (c *e2eCluster) sigtermAll(t *testing.T) {
	t.Helper()
	for _, p := range c.procs {
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range c.procs {
		<-p.exited
		if code := p.cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("member %s exited %d on SIGTERM", p.id, code)
		}
	}
}

// leaderNodes waits up to limit for a listing the leader answered itself. A member that cannot
// reach a ready leader (none elected yet, or it was just elected and has not applied the log up
// to its Barrier) answers from its own copy instead, without an error but marked stale, and that
// copy may lack entries the cluster acknowledged before a restart.
func leaderNodes(ctx context.Context, admin *api.Client, f api.NodeFilter, limit time.Duration) (api.NodesResponse, error) {
	var out api.NodesResponse
	ok, last := testkit.Poll(limit, func() (bool, string) {
		r, err := admin.Nodes(ctx, f)
		if err != nil {
			return false, err.Error()
		}
		if r.Stale != nil {
			return false, "answered by " + answeredBy(r.Stale)
		}
		out = r
		return true, ""
	})
	if !ok {
		return api.NodesResponse{}, fmt.Errorf("no listing of the leader within %s; last: %s", limit, last)
	}
	return out, nil
}

// sameNodes checks that a listing after a restart holds the nodes of the one before, unchanged.
func sameNodes(t *testing.T, before, after api.NodesResponse) {
	t.Helper()
	if len(after.Nodes) != len(before.Nodes) {
		t.Fatalf("%d nodes before the restart, %d after", len(before.Nodes), len(after.Nodes))
	}
	for i := range before.Nodes {
		b, a := before.Nodes[i], after.Nodes[i]
		if !reflect.DeepEqual(b, a) {
			t.Errorf("node %s changed across the restart (answered by %s):\nbefore %+v\nafter  %+v", b.Identity, answeredBy(after.Stale), b, a)
		}
	}
}

// answeredBy says who answered a read: the leader, or a member from its own copy and why.
func answeredBy(st *api.Staleness) string {
	if st == nil {
		return "the leader"
	}
	return fmt.Sprintf("%s from its own copy at applied index %d (%s)", st.Member, st.AppliedIndex, st.Reason)
}
