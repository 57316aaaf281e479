// SPDX-License-Identifier: Apache-2.0

package httpapi_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/seed96588659/muster/pkg/api"
)

// TestApprove_DuplicateResponderHeldThenApprovedThroughAFollower: an edge's failed result naming
// a second responder (the wire form every build takes) holds the node; the held queue lists it
// with its reason; approve takes the admin token only, refuses bad requests naming the field, and
// sent to a follower is forwarded and sends the node back to waiting.
func TestApprove_DuplicateResponderHeldThenApprovedThroughAFollower(t *testing.T) {
	ms := cluster(t, 2)
	ctx := ctxT(t)
	edge := edgeClient(t, ms[0].url)
	if _, err := edge.Register(ctx, api.RegisterRequest{Region: "eu", Edge: "edge-eu", Nodes: []api.RegisterNode{{Identity: "twin"}, {Identity: "single"}}}); err != nil {
		t.Fatal(err)
	}
	acq, err := edge.Acquire(ctx, api.AcquireRequest{Edge: "edge-eu", Region: "eu", MaxNodes: 2})
	if err != nil || acq.Lease == nil || len(acq.Lease.Nodes) != 2 {
		t.Fatalf("acquire: %+v %v", acq, err)
	}
	dup := api.DuplicateResponderPrefix + " a second responder answered configure for twin; nothing it returned is used"
	if _, err := edge.Report(ctx, api.ReportRequest{LeaseID: acq.Lease.ID, Token: acq.Lease.Token, Edge: "edge-eu", Region: "eu", Results: []api.NodeResult{
		{Identity: "twin", Outcome: api.OutcomeFailed, Error: dup}, {Identity: "single", Outcome: api.OutcomeProvisioned},
	}}); err != nil {
		t.Fatal(err)
	}
	admin := adminClient(t, ms[1].url)
	held, err := admin.Nodes(ctx, api.NodeFilter{State: api.StateHeld})
	if err != nil || len(held.Nodes) != 1 || held.Nodes[0].Identity != "twin" || held.Nodes[0].Hold == nil || held.Nodes[0].Hold.Reason != api.HoldDuplicateResponder || held.Nodes[0].Hold.Edge != "edge-eu" {
		t.Fatalf("nodes --state held: %+v %v", held, err)
	}
	for _, c := range []struct {
		token, body string
		status      int
		code        api.Code
		msg         string
	}{
		{"", `{"verb":"approve","nodes":["twin"],"by":"alice"}`, http.StatusUnauthorized, api.CodeUnauthorized, "admin bearer token"},
		{edgeToken, `{"verb":"approve","nodes":["twin"],"by":"alice"}`, http.StatusForbidden, api.CodeForbidden, "edge token does not open the admin API"},
		{adminToken, `{"verb":"approve","region":"eu","all":true,"by":"alice"}`, http.StatusBadRequest, api.CodeBadRequest, "reason: approve --all needs a reason"},
		{adminToken, `{"verb":"approve","nodes":["twin"],"region":"eu","all":true,"reason":"x","by":"alice"}`, http.StatusBadRequest, api.CodeBadRequest, "name no node beside it"},
		{adminToken, `{"verb":"ban","region":"eu","all":true,"reason":"x","by":"alice"}`, http.StatusBadRequest, api.CodeBadRequest, "all: only approve takes it"},
	} {
		status, eb, _ := post(t, ms[1].url, api.PathOperator, c.token, c.body)
		if status != c.status || eb.Code != c.code || !strings.Contains(eb.Error, c.msg) {
			t.Errorf("%s with token %q: %d %s %q; want %d %s containing %q", c.body, c.token, status, eb.Code, eb.Error, c.status, c.code, c.msg)
		}
	}
	resp, err := admin.Operate(ctx, api.OperatorRequest{Verb: api.VerbApprove, Nodes: []string{"twin", "single"}, By: "alice", Reason: "the clone was powered off"})
	if err != nil || !slices.Equal(resp.Done, []string{"twin"}) || len(resp.Rejected) != 1 || !strings.Contains(resp.Rejected[0].Reason, "single is provisioned, not held") {
		t.Fatalf("approve: %+v %v", resp, err)
	}
	if n, err := admin.Node(ctx, "twin"); err != nil || n.State != api.StateWaiting || n.Hold != nil {
		t.Fatalf("twin after approve: %+v %v", n, err)
	}
}
