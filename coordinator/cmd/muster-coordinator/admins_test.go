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

const (
	cliReaderToken   = "token-of-rita-the-reader-0123"
	cliOperatorToken = "token-of-otto-the-operator-01"
)

// namedAdminsMember is inProcessMember with a reader and an operator beside the admin token.
func namedAdminsMember(t *testing.T) string {
	t.Helper()
	c := testcluster.New(t, 1, testcluster.WithAPI(func(cfg *httpapi.Config) {
		cfg.EdgeTokens, cfg.AdminTokens = []string{e2eEdgeToken}, []string{e2eAdminToken}
		cfg.Admins = []httpapi.AdminCredential{{Name: "rita", Role: api.RoleRead, Token: cliReaderToken}, {Name: "otto", Role: api.RoleOperate, Token: cliOperatorToken}}
	}))
	c.Clock, c.Leases = nil, lessor.Config{}
	return c.StartAll().URL
}

// TestAdminCommands_ARoleRefusalIsPrintedPlainly: the CLI reads its token from the same variable;
// a reader's token reads, and a write it may not make exits 1 saying which role the call needs
// and which the reader has; an operator's ban is recorded under the operator's name.
func TestAdminCommands_ARoleRefusalIsPrintedPlainly(t *testing.T) {
	url := namedAdminsMember(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	edge, _ := api.NewClient([]string{url}, api.WithToken(e2eEdgeToken))
	if _, err := edge.Register(ctx, api.RegisterRequest{Region: "eu", Edge: "edge-eu", Nodes: []api.RegisterNode{{Identity: "a.eu"}}}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MUSTER_AUTH_ADMIN_TOKEN", cliReaderToken)
	if code, out, stderr := runCLI(t, "nodes", "--addr", url); code != 0 || !strings.Contains(out, "a.eu") {
		t.Fatalf("nodes as a reader: exit %d\n%s%s", code, out, stderr)
	}
	if code, out, stderr := runCLI(t, "status", "--addr", url); code != 0 || !strings.Contains(out, "you are rita, role read") {
		t.Fatalf("status as a reader: exit %d\n%s%s\nwant it to say who the member took the caller for", code, out, stderr)
	}
	code, out, stderr := runCLI(t, "ban", "--addr", url, "a.eu")
	if code != 1 || !strings.Contains(stderr, "needs role operate; rita has role read") {
		t.Fatalf("ban as a reader: exit %d\n%s%s\nwant 1 naming the role the call needs and the reader's", code, out, stderr)
	}
	if strings.Contains(stderr, cliReaderToken) {
		t.Fatalf("the refusal shows the token: %s", stderr)
	}
	t.Setenv("MUSTER_AUTH_ADMIN_TOKEN", cliOperatorToken)
	if code, out, stderr := runCLI(t, "ban", "--addr", url, "--reason", "bad disk", "a.eu"); code != 0 {
		t.Fatalf("ban as an operator: exit %d\n%s%s", code, out, stderr)
	}
	admin, _ := api.NewClient([]string{url}, api.WithToken(e2eAdminToken))
	n, err := admin.Node(ctx, "a.eu")
	if err != nil || n.History[len(n.History)-1].Reason != "ban by otto: bad disk" {
		t.Fatalf("a.eu after otto's ban: %+v %v", n, err)
	}
}

// TestOperatorCommands_ByIsGone: the audit names the admin the token authenticates, so --by,
// which named whoever the client said, is refused with what replaced it.
func TestOperatorCommands_ByIsGone(t *testing.T) {
	t.Setenv("MUSTER_AUTH_ADMIN_TOKEN", e2eAdminToken)
	code, _, stderr := runCLI(t, "ban", "--addr", "http://127.0.0.1:1", "--by", "alice", "a.eu")
	if code != 1 || !strings.Contains(stderr, "--by is gone") || !strings.Contains(stderr, "auth.admins") || !strings.Contains(stderr, "--reason") {
		t.Fatalf("ban --by: exit %d, %q; want 1 saying --by is gone, what names the admin now and where a note goes", code, stderr)
	}
}
