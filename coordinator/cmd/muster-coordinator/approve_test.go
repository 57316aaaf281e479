// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/httpapi"
	"github.com/seed96588659/muster/coordinator/internal/testcluster"
	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/coordinator/lessor"
	"github.com/seed96588659/muster/pkg/api"
)

// TestApproveCommand_QueueThenApproveByNameAndByRegion: with approval.manual on eu, first-seen
// nodes wait in the held queue (nodes --state held shows why, since when and which edge saw
// them); approve by name and approve --region --reason --all send them to waiting; a node not
// held is refused by name with exit status 1; bad flags are refused before any call.
func TestApproveCommand_QueueThenApproveByNameAndByRegion(t *testing.T) {
	c := testcluster.New(t, 1, testcluster.WithAPI(func(cfg *httpapi.Config) {
		cfg.EdgeTokens, cfg.AdminTokens = []string{e2eEdgeToken}, []string{e2eAdminToken}
	}))
	c.Clock, c.Leases = nil, lessor.Config{}
	c.EditConfig = func(cfg *coordinator.Config) { cfg.Approval = &ledger.Approval{Manual: []string{"eu"}} }
	url := c.StartAll().URL
	t.Setenv("MUSTER_AUTH_ADMIN_TOKEN", e2eAdminToken)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	edge, _ := api.NewClient([]string{url}, api.WithToken(e2eEdgeToken))
	if _, err := edge.Register(ctx, api.RegisterRequest{Region: "eu", Edge: "edge-eu", Nodes: []api.RegisterNode{{Identity: "a.eu"}, {Identity: "b.eu"}, {Identity: "c.eu"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := edge.Register(ctx, api.RegisterRequest{Region: "us", Edge: "edge-us", Nodes: []api.RegisterNode{{Identity: "a.us"}}}); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, "nodes", "--addr", url, "--state", "held")
	if code != 0 || !strings.Contains(out, "HELD") || !strings.Contains(out, "a.eu") || !strings.Contains(out, "manual") || !strings.Contains(out, "edge-eu") || strings.Contains(out, "a.us") {
		t.Fatalf("nodes --state held: exit %d\n%s%s", code, out, stderr)
	}
	if code, out, stderr := runCLI(t, "node", "--addr", url, "a.eu"); code != 0 || !strings.Contains(out, "held") || !strings.Contains(out, "manual since") {
		t.Fatalf("node a.eu: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = runCLI(t, "approve", "--addr", url, "a.eu", "a.us")
	if code != 1 || !strings.Contains(out, "approve: a.eu") || !strings.Contains(out, "refused a.us: ") || !strings.Contains(out, "waiting, not held") || !strings.Contains(stderr, "1 node(s) refused") {
		t.Fatalf("approve: exit %d\n%s%s", code, out, stderr)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"approve", "--addr", url, "--region", "eu", "--all"}, "reason: approve --all needs a reason"},
		{[]string{"approve", "--addr", url, "--region", "eu", "b.eu"}, "give --all to approve every node held there"},
		{[]string{"approve", "--addr", url}, "approve needs the identities of held nodes"},
	} {
		if code, out, stderr := runCLI(t, bad.args...); code == 0 || !strings.Contains(stderr, bad.want) {
			t.Errorf("%v: exit %d\n%s%s", bad.args, code, out, stderr)
		}
	}
	code, out, stderr = runCLI(t, "approve", "--addr", url, "--region", "eu", "--reason", "racked today", "--all")
	if code != 0 || !strings.Contains(out, "approve: b.eu") || !strings.Contains(out, "approve: c.eu") {
		t.Fatalf("approve --all: exit %d\n%s%s", code, out, stderr)
	}
	if code, out, stderr := runCLI(t, "approve", "--addr", url, "--region", "eu", "--reason", "again", "--all"); code != 0 || !strings.Contains(out, "no node is held in region eu") {
		t.Fatalf("approve --all of an empty queue: exit %d\n%s%s", code, out, stderr)
	}
	admin, _ := api.NewClient([]string{url}, api.WithToken(e2eAdminToken))
	if n, err := admin.Node(ctx, "c.eu"); err != nil || n.State != api.StateWaiting || !strings.Contains(n.History[len(n.History)-1].Reason, "racked today") {
		t.Fatalf("c.eu: %+v %v", n, err)
	}
}
