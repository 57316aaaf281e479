// SPDX-License-Identifier: Apache-2.0

package clustersuite

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge/app"
	"github.com/seed96588659/muster/edge/plan"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/fleet/recorder"
	"github.com/seed96588659/muster/sandbox/labkit"
)

// TestPlan_ShowsTheLedgersViewAndTakesNoLease: in cluster mode a plan read with the admin token
// shows each node as the ledger holds it (waiting and offered, banned or leased to another edge
// and skipped, new to the ledger); it registers nothing, takes no lease and sends nothing but
// discovery and rpcutil#inventory. Without a reader credential it says why the ledger was not
// read, and still plans every node.
func TestPlan_ShowsTheLedgersViewAndTakesNoLease(t *testing.T) {
	const r = "pl"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	l := startLab(t, lab.Options{Regions: []string{r}, Emulated: 4, RecordDiscovery: true})
	ids := l.Region(r).Nodes()
	slices.Sort(ids)
	waiting, banned, fresh := ids[0], ids[1], ids[3]

	// Edge 2 of the region registers three nodes and leases one; the operator bans another.
	other := lab.ClientIdentity(r, 2)
	ec, err := api.NewClient(suite.cluster.urls(), api.WithToken(edgeToken(r, 2)))
	if err != nil {
		t.Fatal(err)
	}
	var reg []api.RegisterNode
	for _, id := range ids[:3] {
		reg = append(reg, api.RegisterNode{Identity: id})
	}
	if _, err := ec.Register(ctx, api.RegisterRequest{Region: r, Edge: other, Nodes: reg}); err != nil {
		t.Fatal(err)
	}
	if _, err := suite.cluster.admin.Operate(ctx, api.OperatorRequest{Verb: api.VerbBan, Nodes: []string{banned}, By: "clustersuite"}); err != nil {
		t.Fatal(err)
	}
	got, err := ec.Acquire(ctx, api.AcquireRequest{Edge: other, Region: r, MaxNodes: 1})
	if err != nil || got.Lease == nil || len(got.Lease.Nodes) != 1 {
		t.Fatalf("acquire: %+v, %v", got, err)
	}
	leased := got.Lease.Nodes[0]
	if leased == waiting {
		waiting = ids[2]
	}
	// The lease outlives the plan: renewed until the test ends.
	renewing, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		for renewing.Err() == nil {
			_, _ = ec.Renew(renewing, api.RenewRequest{LeaseID: got.Lease.ID, Token: got.Lease.Token, Edge: other, Region: r})
			select {
			case <-renewing.Done():
			case <-time.After(time.Second):
			}
		}
	}()
	before, err := suite.cluster.nodes(ctx, r)
	if err != nil {
		t.Fatal(err)
	}

	cfg := labkit.EdgeConfig(t, l, r, suite.helper)
	client := l.Region(r).Clients()[0]
	cfg.ChoriaConfig, cfg.ChoriaIdentity, cfg.EdgeName = client.Config, client.Identity, client.Identity
	cfg.Coordinators, cfg.CoordinatorToken = suite.cluster.urls(), edgeToken(r, 1)

	p := labkit.Plan(t, cfg, app.PlanOptions{ReaderToken: adminToken})
	if p.Mode != plan.ModeCluster || p.Ledger != "read" {
		t.Fatalf("mode %s, ledger %q", p.Mode, p.Ledger)
	}
	byID := map[string]plan.Node{}
	for _, n := range p.Nodes {
		byID[n.Identity] = n
	}
	for _, c := range []struct {
		id      string
		state   api.NodeState
		action  plan.Action
		offered bool
		would   string
	}{
		{waiting, api.StateWaiting, plan.Provision, true, "waiting"},
		{banned, api.StateBanned, plan.Skip, false, "banned"},
		{leased, api.StateLeased, plan.Skip, false, "leased to edge " + other},
		{fresh, "", plan.Provision, true, "new to the ledger"},
	} {
		n := byID[c.id]
		if n.Cluster == nil || n.Cluster.State != c.state || n.Action != c.action || n.Cluster.Offered != c.offered || !strings.Contains(n.Cluster.Would, c.would) {
			t.Errorf("%s: action %s, cluster %+v; want %s, state %q, offered %v, %q", c.id, n.Action, n.Cluster, c.action, c.state, c.offered, c.would)
		}
	}
	if s := p.Summary; s.Nodes != 4 || s.Provision != 2 || s.Skip != 2 {
		t.Errorf("summary %+v", s)
	}

	p = labkit.Plan(t, cfg, app.PlanOptions{})
	if !strings.HasPrefix(p.Ledger, "not read: the edge's own credential opens only the edge API") || len(p.Nodes) != 4 || p.Nodes[0].Cluster != nil {
		t.Errorf("without a reader credential: ledger %q, %d nodes", p.Ledger, len(p.Nodes))
	}

	after, err := suite.cluster.nodes(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("the ledger holds %d nodes of %s after the plans, %d before: a plan registered", len(after), r, len(before))
	}
	for id, a := range after {
		b := before[id]
		if a.State != b.State || a.LeaseID != b.LeaseID || a.Edge != b.Edge || a.Attempts != b.Attempts {
			t.Errorf("%s changed through the plans: %+v, was %+v", id, a, b)
		}
	}
	actions, err := recorder.ReadFile(l.ActionsFile())
	if err != nil {
		t.Fatal(err)
	}
	if bad := labkit.NotReads(actions); len(bad) > 0 {
		t.Fatalf("a plan acted on nodes: %+v", bad)
	}
}
