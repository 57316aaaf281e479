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

// ledgerState renders everything a request could change: nodes with their history, leases with
// their expiry, the pause flag and the counts.
func ledgerState(t *testing.T, m *member) string {
	t.Helper()
	l := m.svc.Ledger()
	nodes, _, err := l.Nodes(ledgerAll())
	if err != nil {
		t.Fatal(err)
	}
	leases, err := l.Leases()
	if err != nil {
		t.Fatal(err)
	}
	pause, err := l.Pause()
	if err != nil {
		t.Fatal(err)
	}
	counts, err := l.Counts()
	if err != nil {
		t.Fatal(err)
	}
	members, err := l.Members()
	if err != nil {
		t.Fatal(err)
	}
	full := make([]any, 0, len(nodes))
	for _, n := range nodes {
		rec, err := l.Node(n.Identity)
		if err != nil {
			t.Fatal(err)
		}
		full = append(full, rec)
	}
	b, err := json.Marshal([]any{full, leases, pause, counts, members})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// badCase is one request that must be refused.
type badCase struct {
	name   string
	method string
	path   string
	token  string
	body   string
	status int
	code   api.Code
	want   string // in the error message
}

// TestBadInput_EveryEndpointRefusesAndLeavesTheLedgerAlone sends malformed, oversized, unknown,
// mistyped and mis-authorised requests to every endpoint of a real member: each gets a 4xx whose
// message names the problem, and the ledger is byte-for-byte what it was. A bad node or result
// inside a good register or report is refused alone instead (items_test.go).
func TestBadInput_EveryEndpointRefusesAndLeavesTheLedgerAlone(t *testing.T) {
	m := cluster(t, 1)[0]
	ctx := ctxT(t)
	edge := edgeClient(t, m.url)
	if _, err := edge.Register(ctx, api.RegisterRequest{Region: "ams", Edge: "e1", Nodes: []api.RegisterNode{{Identity: "n1"}, {Identity: "n2"}, {Identity: "n3"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := edge.Register(ctx, api.RegisterRequest{Region: "fra", Edge: "e2", Nodes: []api.RegisterNode{{Identity: "f1"}}}); err != nil {
		t.Fatal(err)
	}
	got, err := edge.Acquire(ctx, api.AcquireRequest{Edge: "e1", Region: "ams", MaxNodes: 2})
	if err != nil || got.Lease == nil {
		t.Fatalf("acquire: %+v %v", got, err)
	}
	ls := got.Lease
	before := ledgerState(t, m)

	big := `{"region":"ams","edge":"e1","nodes":[{"identity":"` + strings.Repeat("x", maxBody) + `"}]}`
	ref := func(id string, token uint64, edge, region string) string {
		return fmt.Sprintf(`"lease_id":%q,"token":%d,"edge":%q,"region":%q`, id, token, edge, region)
	}
	good := ref(ls.ID, ls.Token, "e1", "ams")
	result := fmt.Sprintf(`"results":[{"identity":%q,"outcome":"provisioned"}]`, ls.Nodes[0])
	const post, get = http.MethodPost, http.MethodGet
	cases := []badCase{
		// register
		{"register malformed", post, api.PathRegister, edgeToken, `{"region":"ams",`, 400, api.CodeMalformed, "malformed JSON"},
		{"register oversized", post, api.PathRegister, edgeToken, big, 413, api.CodeBodyTooLarge, "larger than the limit of 4096 bytes"},
		{"register unknown field", post, api.PathRegister, edgeToken, `{"region":"ams","edge":"e1","nodes":[{"identity":"n9","colour":"red"}]}`, 400, api.CodeUnknownField, `unknown field "colour"`},
		{"register trailing data", post, api.PathRegister, edgeToken, `{"region":"ams","edge":"e1","nodes":[{"identity":"n9"}]} {"x":1}`, 400, api.CodeMalformed, "trailing data"},
		{"register no region", post, api.PathRegister, edgeToken, `{"edge":"e1","nodes":[{"identity":"n9"}]}`, 400, api.CodeBadRequest, "region: must not be empty"},
		{"register wrong type", post, api.PathRegister, edgeToken, `{"region":"ams","edge":"e1","nodes":"n9"}`, 400, api.CodeBadRequest, "field nodes"},
		{"register GET", get, api.PathRegister, edgeToken, ``, 405, api.CodeMethodNotAllowed, "needs POST"},
		{"register query", post, api.PathRegister + "?x=1", edgeToken, `{}`, 400, api.CodeBadRequest, "takes no query parameters"},
		// acquire
		{"acquire malformed", post, api.PathAcquire, edgeToken, `{"edge":"e1"`, 400, api.CodeMalformed, "body ends before the object does"},
		{"acquire unknown field", post, api.PathAcquire, edgeToken, `{"edge":"e1","region":"ams","max_nodes":1,"greedy":true}`, 400, api.CodeUnknownField, `unknown field "greedy"`},
		{"acquire zero nodes", post, api.PathAcquire, edgeToken, `{"edge":"e1","region":"ams","max_nodes":0}`, 400, api.CodeBadRequest, "max_nodes: 0 is outside"},
		{"acquire bare wait", post, api.PathAcquire, edgeToken, `{"edge":"e1","region":"ams","max_nodes":1,"wait":10}`, 400, api.CodeBadRequest, "duration must be a string"},
		{"acquire request id with a space", post, api.PathAcquire, edgeToken, `{"edge":"e1","region":"ams","max_nodes":1,"request_id":"a b"}`, 400, api.CodeBadRequest, `request_id: "a b" contains`},
		{"acquire oversized", post, api.PathAcquire, edgeToken, `{"edge":"` + strings.Repeat("e", maxBody) + `"}`, 413, api.CodeBodyTooLarge, "4096"},
		{"acquire empty", post, api.PathAcquire, edgeToken, ``, 400, api.CodeMalformed, "request body is empty"},
		// renew
		{"renew unknown lease", post, api.PathRenew, edgeToken, `{` + ref("no-such-lease", ls.Token, "e1", "ams") + `}`, 404, api.CodeUnknownLease, "no-such-lease"},
		{"renew wrong token", post, api.PathRenew, edgeToken, `{` + ref(ls.ID, ls.Token+100, "e1", "ams") + `}`, 409, api.CodeTokenMismatch, ls.ID},
		{"renew wrong region", post, api.PathRenew, edgeToken, `{` + ref(ls.ID, ls.Token, "e1", "fra") + `}`, 409, api.CodeWrongRegion, ls.ID},
		{"renew wrong edge", post, api.PathRenew, edgeToken, `{` + ref(ls.ID, ls.Token, "e2", "ams") + `}`, 403, api.CodeWrongEdge, ls.ID},
		{"renew zero token", post, api.PathRenew, edgeToken, `{` + ref(ls.ID, 0, "e1", "ams") + `}`, 400, api.CodeBadRequest, "token: must not be 0"},
		{"renew unknown field", post, api.PathRenew, edgeToken, `{` + good + `,"ttl":"1h"}`, 400, api.CodeUnknownField, `unknown field "ttl"`},
		{"renew malformed", post, api.PathRenew, edgeToken, `{` + good, 400, api.CodeMalformed, "malformed JSON"},
		// report
		{"report unknown lease", post, api.PathReport, edgeToken, `{` + ref("no-such-lease", ls.Token, "e1", "ams") + `,` + result + `}`, 404, api.CodeUnknownLease, "no-such-lease"},
		{"report wrong token", post, api.PathReport, edgeToken, `{` + ref(ls.ID, ls.Token-1, "e1", "ams") + `,` + result + `}`, 409, api.CodeTokenMismatch, ls.ID},
		{"report wrong region", post, api.PathReport, edgeToken, `{` + ref(ls.ID, ls.Token, "e1", "fra") + `,` + result + `}`, 409, api.CodeWrongRegion, ls.ID},
		{"report unknown field", post, api.PathReport, edgeToken, `{` + good + `,` + result + `,"force":true}`, 400, api.CodeUnknownField, `unknown field "force"`},
		{"report oversized", post, api.PathReport, edgeToken, `{` + good + `,"results":[{"identity":"n1","outcome":"failed","error":"` + strings.Repeat("e", maxBody) + `"}]}`, 413, api.CodeBodyTooLarge, "4096"},
		{"report trailing", post, api.PathReport, edgeToken, `{` + good + `,` + result + `}]`, 400, api.CodeMalformed, "trailing data"},
		// heartbeat
		{"heartbeat malformed", post, api.PathHeartbeat, edgeToken, `{"edge":}`, 400, api.CodeMalformed, "malformed JSON"},
		{"heartbeat unknown field", post, api.PathHeartbeat, edgeToken, `{"edge":"e1","region":"ams","load":3}`, 400, api.CodeUnknownField, `unknown field "load"`},
		{"heartbeat no edge", post, api.PathHeartbeat, edgeToken, `{"region":"ams"}`, 400, api.CodeBadRequest, "edge: must not be empty"},
		// admin
		{"pause unknown field", post, api.PathPause, adminToken, `{"reason":"x","until":"monday"}`, 400, api.CodeUnknownField, `unknown field "until"`},
		{"pause reason with an escape", post, api.PathPause, adminToken, `{"reason":"upgrade\u001b[2J"}`, 400, api.CodeBadRequest, `reason: contains control character '\x1b' at byte 7`},
		{"pause malformed", post, api.PathPause, adminToken, `{"reason":`, 400, api.CodeMalformed, "malformed JSON"},
		{"resume unknown field", post, api.PathResume, adminToken, `{"now":true}`, 400, api.CodeUnknownField, `unknown field "now"`},
		{"join bad api address", post, api.PathJoin, adminToken, `{"id":"c9","raft_address":"127.0.0.1:1","api_address":"127.0.0.1:2"}`, 400, api.CodeBadRequest, "api_address"},
		{"join replacing the leader", post, api.PathJoin, adminToken, `{"id":"c1","raft_address":"127.0.0.1:1","api_address":"http://127.0.0.1:2"}`, 400, api.CodeBadRequest, "may not replace it"},
		{"join unknown field", post, api.PathJoin, adminToken, `{"id":"c9","raft_address":"127.0.0.1:1","api_address":"http://127.0.0.1:2","role":"x"}`, 400, api.CodeUnknownField, `unknown field "role"`},
		{"remove unknown member", post, api.PathRemove, adminToken, `{"id":"c9"}`, 400, api.CodeBadRequest, `"c9"`},
		{"remove malformed", post, api.PathRemove, adminToken, `{"id"`, 400, api.CodeMalformed, "malformed JSON"},
		{"snapshot unknown field", post, api.PathSnapshot, adminToken, `{"compress":true}`, 400, api.CodeUnknownField, `unknown field "compress"`},
		{"node unknown", get, api.PathNode + "nope", adminToken, ``, 404, api.CodeNotFound, "nope"},
		{"nodes bad state", get, api.PathNodes + "?state=vanished", adminToken, ``, 400, api.CodeBadRequest, `state: "vanished"`},
		{"nodes unknown parameter", get, api.PathNodes + "?colour=red", adminToken, ``, 400, api.CodeBadRequest, `query parameter "colour"`},
		{"nodes bad limit", get, api.PathNodes + "?limit=0", adminToken, ``, 400, api.CodeBadRequest, "limit"},
		{"status POST", post, api.PathStatus, adminToken, `{}`, 405, api.CodeMethodNotAllowed, "needs GET"},
		{"unknown path", get, "/v1/admin/everything", adminToken, ``, 404, api.CodeNotFound, "/v1/admin/everything"},
		// credentials
		{"edge without token", post, api.PathRegister, "", `{"region":"ams","edge":"e1","nodes":[{"identity":"n9"}]}`, 401, api.CodeUnauthorized, "needs an edge bearer token"},
		{"edge with a wrong token", post, api.PathAcquire, "not-the-edge-token", `{"edge":"e1","region":"ams","max_nodes":1}`, 401, api.CodeUnauthorized, "not a valid edge token"},
		{"edge with the admin token", post, api.PathReport, adminToken, `{` + good + `,` + result + `}`, 401, api.CodeUnauthorized, "not a valid edge token"},
		{"admin with the edge token", post, api.PathPause, edgeToken, `{}`, 403, api.CodeForbidden, "edge token does not open the admin API"},
		{"admin without token", get, api.PathStatus, "", ``, 401, api.CodeUnauthorized, "needs the admin bearer token: the request carries none"},
		{"admin read with a wrong token", get, api.PathNodes, "guess", ``, 401, api.CodeUnauthorized, "the bearer token is not an admin token of this member (auth.admin_token, auth.admins)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, eb, _ := do(t, c.method, m.url+c.path, c.token, c.body)
			if status != c.status || eb.Code != c.code || !strings.Contains(eb.Error, c.want) {
				t.Errorf("%s %s: %d %s %q; want %d %s with %q", c.method, c.path, status, eb.Code, eb.Error, c.status, c.code, c.want)
			}
			if after := ledgerState(t, m); after != before {
				t.Fatalf("the ledger changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
	logs := m.logs.String()
	for _, tok := range []string{edgeToken, adminToken, "not-the-edge-token"} {
		if strings.Contains(logs, tok) {
			t.Errorf("a token reached the log")
		}
	}

	// The same lease still works: the refusals cost it nothing.
	if _, err := edge.Renew(ctx, api.RenewRequest{LeaseID: ls.ID, Token: ls.Token, Edge: "e1", Region: "ams"}); err != nil {
		t.Fatalf("renew after the bad requests: %v", err)
	}
}
