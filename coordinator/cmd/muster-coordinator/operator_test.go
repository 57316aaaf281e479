// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// TestOperatorCommands_BanMoveForgetThroughTheCLI: each verb acts through a real member and is
// in the node's history under the admin the token authenticates; a leased node is refused by name with exit status 1
// while the others of the call are acted on.
func TestOperatorCommands_BanMoveForgetThroughTheCLI(t *testing.T) {
	url := inProcessMember(t)
	t.Setenv("MUSTER_AUTH_ADMIN_TOKEN", e2eAdminToken)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	edge, _ := api.NewClient([]string{url}, api.WithToken(e2eEdgeToken))
	if _, err := edge.Register(ctx, api.RegisterRequest{Region: "eu", Edge: "edge-eu", Nodes: []api.RegisterNode{{Identity: "leased.eu"}}}); err != nil {
		t.Fatal(err)
	}
	if acq, err := edge.Acquire(ctx, api.AcquireRequest{Edge: "edge-eu", Region: "eu", MaxNodes: 1}); err != nil || acq.Lease == nil {
		t.Fatalf("acquire: %+v %v", acq, err)
	}
	if _, err := edge.Register(ctx, api.RegisterRequest{Region: "eu", Edge: "edge-eu", Nodes: []api.RegisterNode{{Identity: "a.eu"}, {Identity: "b.eu"}}}); err != nil {
		t.Fatal(err)
	}
	admin, _ := api.NewClient([]string{url}, api.WithToken(e2eAdminToken))
	node := func(id string) api.Node {
		n, err := admin.Node(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	code, out, stderr := runCLI(t, "ban", "--addr", url, "--reason", "bad disk", "a.eu", "leased.eu")
	if code != 1 || !strings.Contains(out, "ban: a.eu") || !strings.Contains(out, "refused leased.eu: ") || !strings.Contains(stderr, "1 node(s) refused") {
		t.Fatalf("ban: exit %d\n%s%s", code, out, stderr)
	}
	if n := node("a.eu"); n.State != api.StateBanned || !strings.Contains(n.History[len(n.History)-1].Reason, "ban by admin: bad disk") {
		t.Fatalf("a.eu after ban: %+v", n)
	}
	if code, out, stderr := runCLI(t, "nodes", "--addr", url, "--state", "banned"); code != 0 || !strings.Contains(out, "a.eu") || strings.Contains(out, "b.eu") {
		t.Fatalf("nodes --state banned: exit %d\n%s%s", code, out, stderr)
	}
	if code, out, stderr := runCLI(t, "move", "--addr", url, "--new-region", "b.eu", "us"); code != 0 || node("b.eu").Region != "us" {
		t.Fatalf("move: exit %d\n%s%s", code, out, stderr)
	}
	if code, out, stderr := runCLI(t, "unban", "--addr", url, "a.eu"); code != 0 || node("a.eu").State != api.StateWaiting {
		t.Fatalf("unban: exit %d\n%s%s", code, out, stderr)
	}
	if code, out, stderr := runCLI(t, "forget", "--addr", url, "a.eu"); code != 0 {
		t.Fatalf("forget: exit %d\n%s%s", code, out, stderr)
	}
	if _, err := admin.Node(ctx, "a.eu"); !api.IsCode(err, api.CodeNotFound) {
		t.Fatalf("a forgotten node: %v", err)
	}
}

// TestEventsCommand_PrintsJSONLines: events prints each transition and operator action as one
// JSON line with its position; --state filters them.
func TestEventsCommand_PrintsJSONLines(t *testing.T) {
	url := inProcessMember(t)
	t.Setenv("MUSTER_AUTH_ADMIN_TOKEN", e2eAdminToken)
	edge, _ := api.NewClient([]string{url}, api.WithToken(e2eEdgeToken))
	if _, err := edge.Register(context.Background(), api.RegisterRequest{Region: "eu", Edge: "edge-eu", Nodes: []api.RegisterNode{{Identity: "a.eu"}, {Identity: "b.eu"}}}); err != nil {
		t.Fatal(err)
	}
	if code, out, stderr := runCLI(t, "ban", "--addr", url, "b.eu"); code != 0 {
		t.Fatalf("ban: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr := runCLI(t, "events", "--addr", url, "--state", "banned")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 1 || !strings.Contains(lines[0], `"identity":"b.eu"`) || !strings.Contains(lines[0], `"to":"banned"`) || !strings.Contains(lines[0], `"index":`) {
		t.Fatalf("events --state banned: exit %d\n%s%s", code, out, stderr)
	}
	if code, out, _ := runCLI(t, "events", "--addr", url); code != 0 || len(strings.Split(strings.TrimSpace(out), "\n")) != 3 {
		t.Fatalf("events: exit %d\n%s", code, out)
	}
}

// TestMoveCommand_RefusesARegionNoNodeIsIn: a mistyped region is refused, naming the regions
// the ledger knows, and nothing moves; --new-region says the region is meant to be new.
func TestMoveCommand_RefusesARegionNoNodeIsIn(t *testing.T) {
	url := inProcessMember(t)
	t.Setenv("MUSTER_AUTH_ADMIN_TOKEN", e2eAdminToken)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	edge, _ := api.NewClient([]string{url}, api.WithToken(e2eEdgeToken))
	for _, r := range []string{"eu", "us"} {
		if _, err := edge.Register(ctx, api.RegisterRequest{Region: r, Edge: "edge-" + r, Nodes: []api.RegisterNode{{Identity: "a." + r}}}); err != nil {
			t.Fatal(err)
		}
	}
	admin, _ := api.NewClient([]string{url}, api.WithToken(e2eAdminToken))
	region := func(id string) string {
		n, err := admin.Node(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return n.Region
	}
	code, out, stderr := runCLI(t, "move", "--addr", url, "a.eu", "uss")
	if code != 1 || !strings.Contains(stderr, `"uss"`) || !strings.Contains(stderr, "eu, us") || !strings.Contains(stderr, "--new-region") {
		t.Fatalf("move to a region no node is in: exit %d\n%s%s\nwant 1 naming the region, the known ones and --new-region", code, out, stderr)
	}
	if r := region("a.eu"); r != "eu" {
		t.Fatalf("a refused move moved a.eu to %s", r)
	}
	if code, out, stderr := runCLI(t, "move", "--addr", url, "a.eu", "us"); code != 0 || region("a.eu") != "us" {
		t.Fatalf("move to a known region: exit %d\n%s%s", code, out, stderr)
	}
	if code, out, stderr := runCLI(t, "move", "--addr", url, "--new-region", "a.us", "ap"); code != 0 || region("a.us") != "ap" {
		t.Fatalf("move --new-region: exit %d\n%s%s", code, out, stderr)
	}
}
