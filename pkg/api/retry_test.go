// SPDX-License-Identifier: Apache-2.0

package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRetryRequest_ValidateNamesWhatIsWrong(t *testing.T) {
	many := make([]string, MaxRetryNodes+1)
	for i := range many {
		many[i] = "n"
	}
	cases := []struct {
		req  RetryRequest
		want string // "" = valid
	}{
		{RetryRequest{Nodes: []string{"a", "b"}}, ""},
		{RetryRequest{Region: "eu", State: StateAbandoned, Limit: 10, DryRun: true}, ""},
		{RetryRequest{Region: "eu", State: StateGone}, ""},
		{RetryRequest{Region: "eu", State: StateDeferred}, ""},
		{RetryRequest{}, "name nodes, or a region and a state"},
		{RetryRequest{Nodes: []string{"a"}, Region: "eu"}, "not both"},
		{RetryRequest{Region: "eu"}, "needs the state"},
		{RetryRequest{Region: "eu", State: StateLeased}, `"leased" is not a state a node is retried from`},
		{RetryRequest{Region: "eu", State: StateProvisioned}, `"provisioned" is not a state`},
		{RetryRequest{Region: "eu", State: StateProvisioned}, `"provisioned" is not a state`},
		{RetryRequest{Region: "e u", State: StateGone}, "region"},
		{RetryRequest{Region: "eu", State: StateGone, Limit: MaxRetryNodes + 1}, "limit"},
		{RetryRequest{Nodes: []string{"a"}, Limit: 3}, "limit: applies to a region"},
		{RetryRequest{Nodes: []string{"a", "b", "a"}}, "nodes[2]: a is listed twice"},
		{RetryRequest{Nodes: []string{"a", ""}}, "nodes[1]: must not be empty"},
		{RetryRequest{Nodes: many}, "more than 10000"},
	}
	for _, c := range cases {
		err := c.req.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.req, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%.80v: error %v, want one containing %q", c.req, err, c.want)
		}
	}
}

func TestClient_RetryPostsTheRequestAndFailuresReadsTheList(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	m := newMember(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == PathRetry:
			var req RetryRequest
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Region != "eu" || req.State != StateAbandoned || !req.DryRun {
				t.Errorf("retry body %+v %v", req, err)
			}
			_ = json.NewEncoder(w).Encode(RetryResponse{DryRun: true, Nodes: []RetriedNode{{Identity: "n1", Region: "eu", From: StateAbandoned, Attempts: 5}}, More: true})
		case r.Method == http.MethodGet && r.URL.Path == PathFailures:
			if got := r.URL.Query().Get("limit"); got != "7" {
				t.Errorf("failures limit %q", got)
			}
			_ = json.NewEncoder(w).Encode(FailuresResponse{Failures: []Failure{{At: at, Identity: "n1", Region: "eu", State: StateAbandoned, Reason: "failed", Error: "boom"}}})
		default:
			t.Errorf("unexpected %s %s", r.Method, r.URL)
			w.WriteHeader(http.StatusNotFound)
		}
	})
	c, err := NewClient([]string{m.srv.URL}, WithToken(testToken))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rr, err := c.Retry(ctx, RetryRequest{Region: "eu", State: StateAbandoned, DryRun: true})
	if err != nil || !rr.DryRun || !rr.More || len(rr.Nodes) != 1 || rr.Nodes[0].Attempts != 5 {
		t.Fatalf("retry: %+v %v", rr, err)
	}
	fr, err := c.Failures(ctx, 7)
	if err != nil || len(fr.Failures) != 1 || !fr.Failures[0].At.Equal(at) || fr.Failures[0].Error != "boom" {
		t.Fatalf("failures: %+v %v", fr, err)
	}
	calls := m.calls.Load()
	if _, err := c.Retry(ctx, RetryRequest{Region: "eu", State: StateLeased}); err == nil {
		t.Error("a retry from leased was sent")
	}
	if _, err := c.Failures(ctx, MaxFailures+1); err == nil {
		t.Error("a failures limit over the maximum was sent")
	}
	if m.calls.Load() != calls {
		t.Errorf("bad requests reached the member")
	}
}
