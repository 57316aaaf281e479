// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/coordinator/httpapi"
	"github.com/seed96588659/muster/coordinator/internal/testcluster"
	"github.com/seed96588659/muster/coordinator/lessor"
	"github.com/seed96588659/muster/pkg/api"
)

// inProcessMember runs one real member (Raft on 127.0.0.1, bbolt in a temporary directory, the
// system clock and the default lease policy) behind the real HTTP API, for CLI tests that need
// no child process; it returns the API's address.
func inProcessMember(t *testing.T) string {
	t.Helper()
	c := testcluster.New(t, 1, testcluster.WithAPI(func(cfg *httpapi.Config) {
		cfg.EdgeTokens, cfg.AdminTokens = []string{e2eEdgeToken}, []string{e2eAdminToken}
	}))
	c.Clock, c.Leases = nil, lessor.Config{}
	return c.StartAll().URL
}

// TestRetryCommand_DryRunThenRetryByRegionAndByName: --dry-run lists the region's gone nodes and
// moves none; the retry moves them; named nodes move too; a leased node refuses the call with
// its reason and a non-zero exit.
func TestRetryCommand_DryRunThenRetryByRegionAndByName(t *testing.T) {
	url := inProcessMember(t)
	t.Setenv("MUSTER_AUTH_ADMIN_TOKEN", e2eAdminToken)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	edge, err := api.NewClient([]string{url}, api.WithToken(e2eEdgeToken))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := edge.Register(ctx, api.RegisterRequest{Region: "eu", Edge: "edge-eu", Nodes: []api.RegisterNode{{Identity: "a.eu"}, {Identity: "b.eu"}, {Identity: "c.eu"}, {Identity: "d.eu"}}}); err != nil {
		t.Fatal(err)
	}
	acq, err := edge.Acquire(ctx, api.AcquireRequest{Edge: "edge-eu", Region: "eu", MaxNodes: 4})
	if err != nil || acq.Lease == nil || len(acq.Lease.Nodes) != 4 {
		t.Fatalf("acquire: %+v %v", acq, err)
	}
	// a and b are gone, c deferred, d stays leased.
	_, err = edge.Report(ctx, api.ReportRequest{LeaseID: acq.Lease.ID, Token: acq.Lease.Token, Edge: "edge-eu", Region: "eu", Results: []api.NodeResult{
		{Identity: "a.eu", Outcome: api.OutcomeGone, Error: "left provisioning mode"},
		{Identity: "b.eu", Outcome: api.OutcomeGone},
		{Identity: "c.eu", Outcome: api.OutcomeDeferred},
	}})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := api.NewClient([]string{url}, api.WithToken(e2eAdminToken))
	if err != nil {
		t.Fatal(err)
	}
	state := func(id string) api.NodeState {
		n, err := admin.Node(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return n.State
	}

	code, out, stderr := runCLI(t, "retry", "--addr", url, "--region", "eu", "--state", "gone", "--dry-run")
	if code != 0 || !strings.Contains(out, "a.eu") || !strings.Contains(out, "b.eu") || !strings.Contains(out, "left provisioning mode") ||
		!strings.Contains(out, "would retry 2 node(s); nothing changed (dry run)") || strings.Contains(out, "c.eu") {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, stderr)
	}
	if state("a.eu") != api.StateGone {
		t.Fatalf("the dry run moved a.eu")
	}
	code, out, stderr = runCLI(t, "retry", "--addr", url, "--region", "eu", "--state", "gone")
	if code != 0 || !strings.Contains(out, "retried 2 node(s): waiting, attempts reset") {
		t.Fatalf("retry: exit %d\n%s%s", code, out, stderr)
	}
	if state("a.eu") != api.StateWaiting || state("b.eu") != api.StateWaiting || state("c.eu") != api.StateDeferred {
		t.Fatalf("after retry: a %s b %s c %s", state("a.eu"), state("b.eu"), state("c.eu"))
	}

	code, out, stderr = runCLI(t, "retry", "--addr", url, "--json", "c.eu")
	if code != 0 || !strings.Contains(out, `"from": "deferred"`) || state("c.eu") != api.StateWaiting {
		t.Fatalf("retry c.eu: exit %d\n%s%s", code, out, stderr)
	}
	code, _, stderr = runCLI(t, "retry", "--addr", url, "d.eu", "a.eu")
	if code != 1 || !strings.Contains(stderr, "d.eu is leased to edge edge-eu") || !strings.Contains(stderr, "a.eu is waiting") || !strings.Contains(stderr, "409") {
		t.Fatalf("retry of a leased node: exit %d %s", code, stderr)
	}
	if state("d.eu") != api.StateLeased {
		t.Fatal("the leased node was moved")
	}
	code, _, stderr = runCLI(t, "retry", "--addr", url, "--region", "mars", "--state", "abandoned")
	if code != 1 || !strings.Contains(stderr, `region "mars"`) || !strings.Contains(stderr, "404") {
		t.Fatalf("retry of an unknown region: exit %d %s", code, stderr)
	}
}

func TestRetryCommand_RefusesBadArgumentsBeforeCallingAnyone(t *testing.T) {
	t.Setenv("MUSTER_AUTH_ADMIN_TOKEN", e2eAdminToken)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"retry"}, "name nodes, or a region and a state"},
		{[]string{"retry", "a", "--region", "eu", "--state", "gone"}, "not both"},
		{[]string{"retry", "--region", "eu"}, "needs the state"},
		{[]string{"retry", "--region", "eu", "--state", "leased"}, `"leased" is not a state a node is retried from`},
		{[]string{"retry", "a", "a"}, "listed twice"},
	}
	for _, c := range cases {
		code, _, stderr := runCLI(t, append(c.args, "--addr", "http://127.0.0.1:1")...)
		if code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 1 and %q", c.args, code, stderr, c.want)
		}
	}
}
