// SPDX-License-Identifier: Apache-2.0

package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/httpapi"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// TestForward_ClientPointedAtAFollowerWorksThroughTheLeader drives a whole lease through a client
// that knows one follower of a real 3-member cluster.
func TestForward_ClientPointedAtAFollowerWorksThroughTheLeader(t *testing.T) {
	ms := cluster(t, 3)
	leader, follower := ms[0], ms[2]
	ctx := ctxT(t)

	// A plain request to the follower is served: the follower forwards it.
	status, eb, hdr := post(t, follower.url, api.PathRegister, edgeToken, `{"region":"ams","edge":"e1","nodes":[{"identity":"n0"}]}`)
	if status != http.StatusOK {
		t.Fatalf("register through the follower: %d %+v", status, eb)
	}
	if hdr.Get(api.HeaderLeader) != leader.url {
		t.Errorf("%s = %q, want the leader %q", api.HeaderLeader, hdr.Get(api.HeaderLeader), leader.url)
	}
	if n := counter(t, follower, "muster_coordinator_http_forwarded_total", map[string]string{"route": api.PathRegister, "outcome": "ok"}); n != 1 {
		t.Errorf("forwarded register requests counted %v, want 1", n)
	}

	edge := edgeClient(t, follower.url)
	var nodes []api.RegisterNode
	for i := 1; i <= 5; i++ {
		nodes = append(nodes, api.RegisterNode{Identity: fmt.Sprintf("n%d", i)})
	}
	if _, err := edge.Register(ctx, api.RegisterRequest{Region: "ams", Edge: "e1", Nodes: nodes}); err != nil {
		t.Fatal(err)
	}
	// The follower names the leader, but the client was not given its address: it goes on
	// through the follower (api.Client follows configured members only). Given every member's
	// address, it moves to the leader.
	if edge.Leader() != follower.url {
		t.Errorf("client's leader %q, want the follower %q it was configured with", edge.Leader(), follower.url)
	}
	all := edgeClient(t, follower.url, ms[1].url, leader.url)
	if _, err := all.Register(ctx, api.RegisterRequest{Region: "ams", Edge: "e1", Nodes: nodes}); err != nil || all.Leader() != leader.url {
		t.Errorf("client of every member: leader %q (%v), want %q", all.Leader(), err, leader.url)
	}
	got, err := edge.Acquire(ctx, api.AcquireRequest{Edge: "e1", Region: "ams", MaxNodes: 6})
	if err != nil || got.Lease == nil || len(got.Lease.Nodes) != 6 {
		t.Fatalf("acquire: %+v %v", got, err)
	}
	ls := got.Lease
	if _, err := edge.Renew(ctx, api.RenewRequest{LeaseID: ls.ID, Token: ls.Token, Edge: "e1", Region: "ams"}); err != nil {
		t.Fatal(err)
	}
	var results []api.NodeResult
	for _, n := range ls.Nodes {
		results = append(results, api.NodeResult{Identity: n, Outcome: api.OutcomeProvisioned, Version: "0.30.0"})
	}
	rep, err := edge.Report(ctx, api.ReportRequest{LeaseID: ls.ID, Token: ls.Token, Edge: "e1", Region: "ams", Results: results})
	if err != nil || len(rep.Applied) != 6 {
		t.Fatalf("report: %+v %v", rep, err)
	}
	// Every member converges on the provisioned nodes; a stale read on the follower shows them.
	admin := adminClient(t, follower.url)
	testkit.WaitFor(t, 30*time.Second, "the follower to apply the report", func() bool {
		st, err := admin.StatusOf(ctx, follower.url)
		return err == nil && st.Regions["ams"][api.StateProvisioned] == 6
	})
	n, err := admin.Node(ctx, "n3")
	if err != nil || n.State != api.StateProvisioned || len(n.History) < 3 {
		t.Fatalf("node n3: %+v %v", n, err)
	}
	status, eb, _ = do(t, http.MethodGet, follower.url+api.PathNodes+"?stale=true&state=provisioned", adminToken, "")
	if status != http.StatusOK {
		t.Fatalf("stale read: %d %+v", status, eb)
	}
}

// TestForward_RedirectModeAnswers421AndTheClientFollows checks the other way a follower may
// answer: with the leader's address, which the client follows (it is one of its members).
func TestForward_RedirectModeAnswers421AndTheClientFollows(t *testing.T) {
	ms := cluster(t, 3)
	leader, follower := ms[0], ms[1]
	redirecting, err := httpapi.New(follower.svc, httpapi.Config{
		EdgeTokens: []string{edgeToken}, AdminTokens: []string{adminToken}, Redirect: true,
		Self: follower.url, Errors: coordinator.HTTPErrors(),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(redirecting)
	defer srv.Close()

	status, eb, hdr := post(t, srv.URL, api.PathHeartbeat, edgeToken, `{"edge":"e1","region":"ams"}`)
	if status != http.StatusMisdirectedRequest || eb.Code != api.CodeNotLeader || eb.Leader != leader.url || hdr.Get(api.HeaderLeader) != leader.url {
		t.Fatalf("redirect mode: %d %+v %v", status, eb, hdr)
	}
	edge := edgeClient(t, srv.URL, leader.url)
	hb, err := edge.Heartbeat(ctxT(t), api.HeartbeatRequest{Edge: "e1", Region: "ams"})
	if err != nil || hb.Leader != leader.url {
		t.Fatalf("heartbeat through the redirecting follower: %+v %v", hb, err)
	}

	// A request already forwarded once is never forwarded again: it gets the leader's address.
	req, _ := http.NewRequest(http.MethodPost, follower.url+api.PathHeartbeat, strings.NewReader(`{"edge":"e1","region":"ams"}`))
	req.Header.Set("Authorization", "Bearer "+edgeToken)
	req.Header.Set(api.HeaderForwarded, "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest || resp.Header.Get(api.HeaderLeader) != leader.url {
		t.Fatalf("forwarded twice? %d %v", resp.StatusCode, resp.Header)
	}
}

// TestAcquire_LongPollThroughAFollowerGetsANodeRegisteredWhileWaiting.
func TestAcquire_LongPollThroughAFollowerGetsANodeRegisteredWhileWaiting(t *testing.T) {
	ms := cluster(t, 3)
	ctx := ctxT(t)
	waiting := edgeClient(t, ms[1].url)
	type result struct {
		resp api.AcquireResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		r, err := waiting.Acquire(ctx, api.AcquireRequest{Edge: "e1", Region: "lhr", MaxNodes: 5, Wait: api.Duration(25 * time.Second)})
		done <- result{r, err}
	}()
	// The region is empty: the acquire can only end with a lease on the node registered next.
	if _, err := edgeClient(t, ms[2].url).Register(ctx, api.RegisterRequest{Region: "lhr", Edge: "e1", Nodes: []api.RegisterNode{{Identity: "late-1"}}}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.err != nil || r.resp.Lease == nil || len(r.resp.Lease.Nodes) != 1 || r.resp.Lease.Nodes[0] != "late-1" {
			t.Fatalf("long poll: %+v %v", r.resp, r.err)
		}
	case <-ctx.Done():
		t.Fatal("the long poll never returned")
	}
}

// TestPause_ReplicatedFlagStopsGrantsUntilResume pauses through a follower with the CLI's client.
func TestPause_ReplicatedFlagStopsGrantsUntilResume(t *testing.T) {
	ms := cluster(t, 3)
	ctx := ctxT(t)
	admin := adminClient(t, ms[2].url)
	edge := edgeClient(t, ms[1].url)
	if _, err := edge.Register(ctx, api.RegisterRequest{Region: "ams", Edge: "e1", Nodes: []api.RegisterNode{{Identity: "p1"}}}); err != nil {
		t.Fatal(err)
	}
	p, err := admin.Pause(ctx, api.PauseRequest{Reason: "maintenance window"})
	if err != nil || !p.Paused {
		t.Fatalf("pause: %+v %v", p, err)
	}
	got, err := edge.Acquire(ctx, api.AcquireRequest{Edge: "e1", Region: "ams", MaxNodes: 1, Wait: api.Duration(time.Second)})
	if err != nil || got.Lease != nil || !got.Paused {
		t.Fatalf("acquire while paused: %+v %v", got, err)
	}
	hb, err := edge.Heartbeat(ctx, api.HeartbeatRequest{Edge: "e1", Region: "ams"})
	if err != nil || !hb.Paused {
		t.Fatalf("heartbeat while paused: %+v %v", hb, err)
	}
	testkit.WaitFor(t, 30*time.Second, "every member to show the pause", func() bool {
		for _, m := range ms {
			st, err := admin.StatusOf(ctx, m.url)
			if err != nil || !st.Paused || st.PauseReason != "maintenance window" {
				return false
			}
		}
		return true
	})
	if _, err := admin.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	got, err = edge.Acquire(ctx, api.AcquireRequest{Edge: "e1", Region: "ams", MaxNodes: 1, Wait: api.Duration(5 * time.Second)})
	if err != nil || got.Lease == nil || got.Paused {
		t.Fatalf("acquire after resume: %+v %v", got, err)
	}
}
