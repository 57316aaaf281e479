// SPDX-License-Identifier: Apache-2.0

package main

import (
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
	c, edge, ctx := startThreeWithNodes(t, "fra", "r", 20)
	first := c.procs[0]
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
	before, err := admin.Nodes(ctx, api.NodeFilter{Region: "fra", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}

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
	c.launch(c.procs[0], true, "")
	c.launch(c.procs[1], false, first.apiURL)
	c.launch(c.procs[2], false, first.apiURL)
	c.waitLeader(t, c.addrs(""), 3, "")

	var after api.NodesResponse
	testkit.WaitFor(t, 60*time.Second, "the leader to serve the ledger", func() (bool, string) {
		after, err = admin.Nodes(ctx, api.NodeFilter{Region: "fra", Limit: 100})
		return err == nil, fmt.Sprint(err)
	})
	if len(after.Nodes) != len(before.Nodes) {
		t.Fatalf("%d nodes before the restart, %d after", len(before.Nodes), len(after.Nodes))
	}
	for i := range before.Nodes {
		b, a := before.Nodes[i], after.Nodes[i]
		if !reflect.DeepEqual(b, a) {
			t.Errorf("node %s changed across the restart:\nbefore %+v\nafter  %+v", b.Identity, b, a)
		}
	}
	if _, err := edge.Renew(ctx, api.RenewRequest{LeaseID: ls.ID, Token: ls.Token, Edge: "e1", Region: "fra"}); err != nil {
		t.Fatalf("renew of the lease granted before the restart: %v", err)
	}
}
