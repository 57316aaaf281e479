// SPDX-License-Identifier: Apache-2.0

package httpapi_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/seed96588659/muster/pkg/api"
)

// TestRetry_AdminOnlyRefusalsAndAMoveThroughAFollower: the retry endpoint takes the admin token
// only; its refusals carry their status and reason and change nothing; a retry sent to a
// follower is forwarded, moves the gone nodes and counts them on the leader; the failures list
// shows what happened, newest first.
func TestRetry_AdminOnlyRefusalsAndAMoveThroughAFollower(t *testing.T) {
	ms := cluster(t, 2)
	ctx := ctxT(t)
	edge := edgeClient(t, ms[0].url)
	if _, err := edge.Register(ctx, api.RegisterRequest{Region: "eu", Edge: "edge-eu", Nodes: []api.RegisterNode{{Identity: "g1"}, {Identity: "g2"}, {Identity: "held"}}}); err != nil {
		t.Fatal(err)
	}
	acq, err := edge.Acquire(ctx, api.AcquireRequest{Edge: "edge-eu", Region: "eu", MaxNodes: 3})
	if err != nil || acq.Lease == nil || len(acq.Lease.Nodes) != 3 {
		t.Fatalf("acquire: %+v %v", acq, err)
	}
	if _, err := edge.Report(ctx, api.ReportRequest{LeaseID: acq.Lease.ID, Token: acq.Lease.Token, Edge: "edge-eu", Region: "eu", Results: []api.NodeResult{
		{Identity: "g1", Outcome: api.OutcomeGone, Error: "no answer"}, {Identity: "g2", Outcome: api.OutcomeGone, Error: "no answer either"},
	}}); err != nil {
		t.Fatal(err)
	}

	body := `{"region":"eu","state":"gone"}`
	for _, c := range []struct {
		token, body string
		status      int
		code        api.Code
		msg         string
	}{
		{"", body, http.StatusUnauthorized, api.CodeUnauthorized, "admin bearer token"},
		{edgeToken, body, http.StatusForbidden, api.CodeForbidden, "edge token does not open the admin API"},
		{adminToken, `{"region":"eu","state":"leased"}`, http.StatusBadRequest, api.CodeBadRequest, `"leased" is not a state`},
		{adminToken, `{"nodes":["g1"],"force":true}`, http.StatusBadRequest, api.CodeUnknownField, "force"},
		{adminToken, `{"nodes":["held"]}`, http.StatusConflict, api.CodeConflict, "held is leased to edge edge-eu"},
		{adminToken, `{"nodes":["nobody"]}`, http.StatusNotFound, api.CodeNotFound, "unknown node: nobody"},
		{adminToken, `{"region":"mars","state":"gone"}`, http.StatusNotFound, api.CodeNotFound, `region "mars"`},
	} {
		status, eb, _ := post(t, ms[1].url, api.PathRetry, c.token, c.body)
		if status != c.status || eb.Code != c.code || !strings.Contains(eb.Error, c.msg) {
			t.Errorf("%s with token %q: %d %s %q; want %d %s containing %q", c.body, c.token, status, eb.Code, eb.Error, c.status, c.code, c.msg)
		}
	}
	admin := adminClient(t, ms[1].url)
	if n, err := admin.Node(ctx, "g1"); err != nil || n.State != api.StateGone {
		t.Fatalf("g1 after refusals: %+v %v", n, err)
	}
	dry, err := admin.Retry(ctx, api.RetryRequest{Region: "eu", State: api.StateGone, DryRun: true})
	if err != nil || !dry.DryRun || len(dry.Nodes) != 2 || dry.Nodes[0].Identity != "g1" || dry.Nodes[0].From != api.StateGone || dry.Nodes[0].LastError != "no answer" {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	if n, _ := admin.Node(ctx, "g1"); n.State != api.StateGone {
		t.Fatal("the dry run moved g1")
	}
	got, err := admin.Retry(ctx, api.RetryRequest{Region: "eu", State: api.StateGone, Limit: 1})
	if err != nil || len(got.Nodes) != 1 || !got.More {
		t.Fatalf("retry with limit 1: %+v %v", got, err)
	}
	got, err = admin.Retry(ctx, api.RetryRequest{Nodes: []string{"g2"}})
	if err != nil || len(got.Nodes) != 1 || got.Nodes[0].Identity != "g2" {
		t.Fatalf("retry g2: %+v %v", got, err)
	}
	for _, id := range []string{"g1", "g2"} {
		n, err := admin.Node(ctx, id)
		if err != nil || n.State != api.StateWaiting || n.Attempts != 0 || n.History[len(n.History)-1].Reason != "retried by the operator (admin)" {
			t.Errorf("%s after retry: %+v %v", id, n, err)
		}
	}
	if v := counter(t, ms[0], "muster_coordinator_retried_nodes_total", map[string]string{"member": ms[0].id}); v != 2 {
		t.Errorf("leader's retried counter %v, want 2", v)
	}
	// Retrying again is refused: they wait already.
	var apiErr *api.Error
	if _, err := admin.Retry(ctx, api.RetryRequest{Nodes: []string{"g1"}}); !errors.As(err, &apiErr) || apiErr.Status != http.StatusConflict || !strings.Contains(apiErr.Message, "g1 is waiting") {
		t.Errorf("second retry: %v", err)
	}

	fs, err := admin.Failures(ctx, 0)
	if err != nil || len(fs.Failures) != 2 || fs.Failures[0].Identity != "g2" || fs.Failures[0].State != api.StateGone || fs.Failures[0].Edge != "edge-eu" || fs.Failures[1].Error != "no answer" {
		t.Fatalf("failures: %+v %v", fs, err)
	}
	for _, c := range []struct {
		token, query string
		status       int
	}{
		{edgeToken, "", http.StatusForbidden},
		{"", "", http.StatusUnauthorized},
		{adminToken, "?limit=501", http.StatusBadRequest},
		{adminToken, "?limit=x", http.StatusBadRequest},
		{adminToken, "?region=eu", http.StatusBadRequest},
		{adminToken, "?stale=true&limit=1", http.StatusOK},
	} {
		if status, eb, _ := do(t, http.MethodGet, ms[1].url+api.PathFailures+c.query, c.token, ""); status != c.status {
			t.Errorf("failures%s with token %q: %d %+v, want %d", c.query, c.token, status, eb, c.status)
		}
	}
}

// TestRetry_SentAgainWithItsRequestIDIsAnsweredNotRefused: a retry whose answer was lost (a
// leader change) is sent again with the same request id; it is answered with what it moved, not
// refused because those nodes wait now, and nothing moves twice.
func TestRetry_SentAgainWithItsRequestIDIsAnsweredNotRefused(t *testing.T) {
	ms := cluster(t, 2)
	ctx := ctxT(t)
	edge := edgeClient(t, ms[0].url)
	ids := []string{"g1", "g2", "g3"}
	var nodes []api.RegisterNode
	var results []api.NodeResult
	for _, id := range ids {
		nodes = append(nodes, api.RegisterNode{Identity: id})
		results = append(results, api.NodeResult{Identity: id, Outcome: api.OutcomeGone, Error: "no answer"})
	}
	if _, err := edge.Register(ctx, api.RegisterRequest{Region: "eu", Edge: "edge-eu", Nodes: nodes}); err != nil {
		t.Fatal(err)
	}
	acq, err := edge.Acquire(ctx, api.AcquireRequest{Edge: "edge-eu", Region: "eu", MaxNodes: 3})
	if err != nil || acq.Lease == nil || len(acq.Lease.Nodes) != 3 {
		t.Fatalf("acquire: %+v %v", acq, err)
	}
	if _, err := edge.Report(ctx, api.ReportRequest{LeaseID: acq.Lease.ID, Token: acq.Lease.Token, Edge: "edge-eu", Region: "eu", Results: results}); err != nil {
		t.Fatal(err)
	}
	admin := adminClient(t, ms[1].url)
	for _, req := range []api.RetryRequest{
		{Nodes: []string{"g1"}, RequestID: "op-named"},
		{Region: "eu", State: api.StateGone, RequestID: "op-region"},
	} {
		first, err := admin.Retry(ctx, req)
		if err != nil || len(first.Nodes) == 0 {
			t.Fatalf("%+v: %+v %v", req, first, err)
		}
		again, err := admin.Retry(ctx, req)
		if err != nil {
			t.Fatalf("%+v sent again: %v, want the first answer", req, err)
		}
		if len(again.Nodes) != len(first.Nodes) || again.Nodes[0] != first.Nodes[0] || len(again.Skipped) != 0 {
			t.Fatalf("%+v sent again: %+v, want %+v", req, again, first)
		}
	}
	for _, id := range ids {
		n, err := admin.Node(ctx, id)
		if err != nil || n.State != api.StateWaiting {
			t.Fatalf("%s: %+v %v", id, n, err)
		}
		retried := 0
		for _, tr := range n.History {
			if tr.Reason == "retried by the operator (admin)" {
				retried++
			}
		}
		if retried != 1 {
			t.Errorf("%s retried %d times, want once", id, retried)
		}
	}
	// Another request id is another retry: g1 waits, so it is refused by name.
	if _, err := admin.Retry(ctx, api.RetryRequest{Nodes: []string{"g1"}, RequestID: "op-other"}); err == nil || !strings.Contains(err.Error(), "g1 is waiting") {
		t.Fatalf("a new retry of a waiting node: %v, want it refused", err)
	}
}
