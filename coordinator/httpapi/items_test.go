// SPDX-License-Identifier: Apache-2.0

package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/seed96588659/muster/pkg/api"
)

// postJSON posts body with the edge token and decodes a 200 answer into out.
func postItems(t *testing.T, url, path, body string, out any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+edgeToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var eb api.ErrorBody
		_ = json.NewDecoder(resp.Body).Decode(&eb)
		t.Fatalf("POST %s: %d %+v, want 200 with the bad item refused by name", path, resp.StatusCode, eb)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}

func rejectedNames(rs []api.RejectedResult, want string) string {
	for _, r := range rs {
		if strings.Contains(r.Reason, want) {
			return r.Identity
		}
	}
	return ""
}

// TestItems_OneBadResultIsRefusedAloneAndTheRestRecorded: a lease's report with one result whose
// version is longer than the API takes (or an unknown outcome, or a second result for a node)
// records the other results (their nodes leave the lease) and refuses those alone, by name; a
// node whose only result was refused stays leased.
func TestItems_OneBadResultIsRefusedAloneAndTheRestRecorded(t *testing.T) {
	m := cluster(t, 1)[0]
	ctx := ctxT(t)
	edge := edgeClient(t, m.url)
	if _, err := edge.Register(ctx, api.RegisterRequest{Region: "ams", Edge: "e1", Nodes: []api.RegisterNode{{Identity: "n1"}, {Identity: "n2"}, {Identity: "n3"}}}); err != nil {
		t.Fatal(err)
	}
	got, err := edge.Acquire(ctx, api.AcquireRequest{Edge: "e1", Region: "ams", MaxNodes: 3})
	if err != nil || got.Lease == nil || len(got.Lease.Nodes) != 3 {
		t.Fatalf("acquire: %+v %v", got, err)
	}
	ls := got.Lease
	long := strings.Repeat("9", 300)
	body := fmt.Sprintf(`{"lease_id":%q,"token":%d,"edge":"e1","region":"ams","results":[{"identity":%q,"outcome":"provisioned","version":"1.2.3"},{"identity":%q,"outcome":"provisioned","version":%q},{"identity":%q,"outcome":"failed","error":"x"},{"identity":%q,"outcome":"done"},{"identity":%q,"outcome":"provisioned"}]}`,
		ls.ID, ls.Token, ls.Nodes[0], ls.Nodes[1], long, ls.Nodes[2], ls.Nodes[0], ls.Nodes[2])
	var resp api.ReportResponse
	postItems(t, m.url, api.PathReport, body, &resp)
	if len(resp.Applied) != 2 || rejectedNames(resp.Rejected, "results[1].version: 300 bytes, longer than 128") != ls.Nodes[1] ||
		rejectedNames(resp.Rejected, `results[3].outcome: "done" is not one of`) != ls.Nodes[0] ||
		rejectedNames(resp.Rejected, `results[4].identity: "`+ls.Nodes[2]+`" repeats results[2]`) != ls.Nodes[2] {
		t.Fatalf("report with an over-long version, an unknown outcome and a repeat: %+v", resp)
	}
	for i, want := range []api.NodeState{api.StateProvisioned, api.StateLeased, api.StateWaiting} {
		if n, err := m.svc.Node(ctx, ls.Nodes[i]); err != nil || n.State != want {
			t.Fatalf("%s after the report: %+v %v, want %s", ls.Nodes[i], n, err, want)
		}
	}
}

// TestItems_OneBadIdentityDoesNotBlockARegister: a sweep listing one identity the API refuses
// (a space, a '/', longer than 253 bytes), a known node of another region and a repeat registers
// the rest;
// the bad ones are refused by name and the other region's node keeps its region and facts.
func TestItems_OneBadIdentityDoesNotBlockARegister(t *testing.T) {
	m := cluster(t, 1)[0]
	ctx := ctxT(t)
	edge := edgeClient(t, m.url)
	if _, err := edge.Register(ctx, api.RegisterRequest{Region: "us", Edge: "e-us", Nodes: []api.RegisterNode{{Identity: "u1", Facts: json.RawMessage(`{"dc":"us"}`)}}}); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 254)
	body := fmt.Sprintf(`{"region":"eu","edge":"e-eu","nodes":[{"identity":"a1"},{"identity":"bad one"},{"identity":"b/2"},{"identity":%q},{"identity":"u1","facts":{"dc":"eu"}},{"identity":"a2"},{"identity":"a1"}]}`, long)
	var resp api.RegisterResponse
	postItems(t, m.url, api.PathRegister, body, &resp)
	if resp.Added != 2 || len(resp.Rejected) != 5 {
		t.Fatalf("register with five bad nodes: %+v, want a1 and a2 added and five refused", resp)
	}
	for _, want := range []struct{ id, reason string }{
		{"bad one", `nodes[1].identity: "bad one" contains ' '`},
		{"b/2", `nodes[2].identity: "b/2" contains '/'`},
		{long, "nodes[3].identity: 254 bytes, longer than 253"},
		{"u1", "node u1 is in region us"},
		{"a1", `nodes[6].identity: "a1" repeats nodes[0]`},
	} {
		if got := rejectedNames(resp.Rejected, want.reason); got != want.id {
			t.Errorf("no refusal of %.20q with %q in %+v", want.id, want.reason, resp.Rejected)
		}
	}
	if n, err := m.svc.Node(ctx, "u1"); err != nil || n.Region != "us" || string(n.Facts) != `{"dc":"us"}` {
		t.Fatalf("u1 after another region's register: %+v %v, want region us and its facts", n, err)
	}
}

// TestItems_ControlCharactersAreRefusedByFieldAndNode: text from a node reaches the API escaped
// (the edge escapes it); a client that sends a control character anyway has that node's result
// or registration refused alone, naming the field and the node, and the rest recorded.
func TestItems_ControlCharactersAreRefusedByFieldAndNode(t *testing.T) {
	m := cluster(t, 1)[0]
	ctx := ctxT(t)
	var reg api.RegisterResponse
	postItems(t, m.url, api.PathRegister, `{"region":"cc","edge":"e1","nodes":[{"identity":"c1"},{"identity":"c2","version":"1.0\u001b]52;c;b3duZWQ=\u0007"}]}`, &reg)
	if reg.Added != 1 || rejectedNames(reg.Rejected, `nodes[1].version: contains control character '\x1b' at byte 3`) != "c2" {
		t.Fatalf("register with an escape sequence in a version: %+v", reg)
	}
	if _, err := edgeClient(t, m.url).Register(ctx, api.RegisterRequest{Region: "cc", Edge: "e1", Nodes: []api.RegisterNode{{Identity: "c2"}, {Identity: "c3"}}}); err != nil {
		t.Fatal(err)
	}
	got, err := edgeClient(t, m.url).Acquire(ctx, api.AcquireRequest{Edge: "e1", Region: "cc", MaxNodes: 3})
	if err != nil || got.Lease == nil || len(got.Lease.Nodes) != 3 {
		t.Fatalf("acquire: %+v %v", got, err)
	}
	ls := got.Lease
	body := fmt.Sprintf(`{"lease_id":%q,"token":%d,"edge":"e1","region":"cc","results":[{"identity":%q,"outcome":"failed","error":"jwt failed: \u001b[2J\rcleared"},{"identity":%q,"outcome":"provisioned","version":"0.30\u009b"},{"identity":%q,"outcome":"failed","error":"jwt failed: \\x1b[2J\\rcleared"}]}`,
		ls.ID, ls.Token, ls.Nodes[0], ls.Nodes[1], ls.Nodes[2])
	var resp api.ReportResponse
	postItems(t, m.url, api.PathReport, body, &resp)
	if len(resp.Applied) != 1 || resp.Applied[0] != ls.Nodes[2] ||
		rejectedNames(resp.Rejected, `results[0].error: contains control character '\x1b' at byte 12`) != ls.Nodes[0] ||
		rejectedNames(resp.Rejected, `results[1].version: contains control character '\u009b' at byte 4`) != ls.Nodes[1] {
		t.Fatalf("report with control characters in an error and a version: %+v", resp)
	}
	n, err := m.svc.Node(ctx, ls.Nodes[2])
	if err != nil || n.LastError != `jwt failed: \x1b[2J\rcleared` {
		t.Fatalf("the escaped error recorded as %q (%v)", n.LastError, err)
	}
}
