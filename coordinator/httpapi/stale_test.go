// SPDX-License-Identifier: Apache-2.0

package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// getJSON reads path on url with the admin token into out and returns the status.
func getJSON(t *testing.T, url, path string, out any) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s%s: %v", url, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("GET %s%s: decode: %v", url, path, err)
		}
	}
	return resp.StatusCode
}

// An operator in a datacenter cut off from the quorum still reads its member's copy of the
// ledger (nodes, node, failures), marked stale with what the member knows of a leader, instead
// of a 503 no_leader; a read through a member whose leader answers is the leader's, unmarked.
func TestReads_AMemberCutOffFromTheQuorumAnswersFromItsOwnCopyMarkedStale(t *testing.T) {
	ms := cluster(t, 3)
	leader, follower := ms[0], ms[1]
	ctx := ctxT(t)
	if _, err := edgeClient(t, leader.url).Register(ctx, api.RegisterRequest{Region: "ams", Edge: "e1", Nodes: []api.RegisterNode{{Identity: "n1"}, {Identity: "n2"}}}); err != nil {
		t.Fatal(err)
	}
	var nodes api.NodesResponse
	testkit.WaitFor(t, 30*time.Second, "the follower to apply the registration", func() bool {
		return getJSON(t, follower.url, api.PathNodes+"?region=ams&stale=true", &nodes) == http.StatusOK && len(nodes.Nodes) == 2
	})
	if st := nodes.Stale; st == nil || !st.KnownLeader || st.Member != follower.id || !strings.Contains(st.Reason, "stale=true") {
		t.Fatalf("a read asked stale of a follower: stale %+v, want it marked, with the leader known", st)
	}
	nodes = api.NodesResponse{}
	if code := getJSON(t, follower.url, api.PathNodes+"?region=ams", &nodes); code != http.StatusOK || nodes.Stale != nil || len(nodes.Nodes) != 2 {
		t.Fatalf("a read through a follower whose leader answers: %d, stale %+v, %d nodes", code, nodes.Stale, len(nodes.Nodes))
	}

	// The follower loses both other members: no quorum, and soon no leader.
	for _, m := range []*member{leader, ms[2]} {
		m.srv.Close()
		if err := m.svc.Close(); err != nil {
			t.Fatalf("stop %s: %v", m.id, err)
		}
	}
	nodes = api.NodesResponse{}
	if code := getJSON(t, follower.url, api.PathNodes+"?region=ams", &nodes); code != http.StatusOK || len(nodes.Nodes) != 2 {
		t.Fatalf("nodes from a member cut off from the quorum: status %d, %d nodes", code, len(nodes.Nodes))
	}
	if st := nodes.Stale; st == nil || st.Member != follower.id || st.AppliedIndex == 0 || !strings.Contains(st.Reason, "leader") {
		t.Fatalf("nodes from a member cut off from the quorum: stale %+v, want it marked with the reason", nodes.Stale)
	}
	var n api.Node
	if code := getJSON(t, follower.url, api.PathNode+"n1", &n); code != http.StatusOK || n.Identity != "n1" || n.Stale == nil {
		t.Fatalf("node from a member cut off from the quorum: status %d, %+v", code, n)
	}
	var f api.FailuresResponse
	if code := getJSON(t, follower.url, api.PathFailures, &f); code != http.StatusOK || f.Stale == nil {
		t.Fatalf("failures from a member cut off from the quorum: status %d, %+v", code, f)
	}
	// Once the member has noticed there is no leader, it says so and how long it has been.
	testkit.WaitFor(t, 30*time.Second, "the member to know of no leader", func() bool {
		nodes = api.NodesResponse{}
		return getJSON(t, follower.url, api.PathNodes+"?region=ams", &nodes) == http.StatusOK && nodes.Stale != nil && !nodes.Stale.KnownLeader
	})
	if nodes.Stale.LastContact <= 0 {
		t.Fatalf("stale %+v: want the time since the member last heard from a leader", nodes.Stale)
	}
}
