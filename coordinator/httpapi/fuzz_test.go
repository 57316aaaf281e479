// SPDX-License-Identifier: Apache-2.0

package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/seed96588659/muster/pkg/api"
)

// fuzzBody is one request type a POST endpoint decodes (handlers.go), with the endpoint's emptyOK.
type fuzzBody struct {
	name    string
	typ     reflect.Type
	emptyOK bool
}

// fuzzBodies lists every body type postJSON decodes; a corpus entry's kind picks one by index
// (modulo), so new types go at the end to keep committed entries pointing at the same type.
func fuzzBodies() []fuzzBody {
	return []fuzzBody{
		{"register", reflect.TypeFor[api.RegisterRequest](), false},
		{"acquire", reflect.TypeFor[api.AcquireRequest](), false},
		{"renew", reflect.TypeFor[api.RenewRequest](), false},
		{"report", reflect.TypeFor[api.ReportRequest](), false},
		{"heartbeat", reflect.TypeFor[api.HeartbeatRequest](), false},
		{"pause", reflect.TypeFor[api.PauseRequest](), true},
		{"resume", reflect.TypeFor[empty](), true},
		{"join", reflect.TypeFor[api.JoinRequest](), false},
		{"remove", reflect.TypeFor[api.RemoveRequest](), false},
		{"retry", reflect.TypeFor[api.RetryRequest](), false},
	}
}

// FuzzDecodeRequest feeds any body to the decoding and validation every POST endpoint runs
// before it reaches the ledger. Nothing panics; a refusal is a 400 with a message; a register or
// report splits into accepted and refused items that account for every item, each refusal naming
// its item; and a body that is accepted re-encodes to one that is accepted as the same request
// (what a follower forwards and the ledger stores is what the edge meant).
func FuzzDecodeRequest(f *testing.F) {
	bodies := fuzzBodies()
	kindOf := map[string]uint8{}
	for i, b := range bodies {
		kindOf[b.name] = uint8(i)
	}
	for _, s := range []struct{ kind, body string }{
		{"register", `{"region":"eu","edge":"e1","nodes":[{"identity":"n1.example.net","version":"0.29.4","facts":{"os":{"family":"linux"},"n":[1,2.5e3,null]}},{"identity":"n2"}]}`},
		{"register", `{"region":"eu","edge":"e1","nodes":[{"identity":"n1"},{"identity":"n1"},{"identity":"a b"},{"identity":"x/y"},{"identity":""}]}`},
		{"register", `{"region":"eu","edge":"e1","nodes":[{"identity":"n1","facts":"not an object"},{"identity":"n2","facts":null},{"identity":"n3","facts": { "a" : "<&>" , "a":2 }}]}`},
		{"register", `{"Region":"eu","EDGE":"e1","nodes":[{"Identity":"n1"}]}`},
		{"register", `{"region":"eu","edge":"e1","nodes":[]}`},
		{"register", "{\"region\":\"eu\",\"edge\":\"e1\",\"nodes\":[{\"identity\":\"n\xff1\"},{\"identity\":\"n\\u00001\"},{\"identity\":\"\\ud800\"}]}"},
		{"register", `{"region":"eu","edge":"e1","nodes":[{"identity":"n1","facts":{"a":[[[[[[[[[[]]]]]]]]]]}}],"nodes":[{"identity":"n2"}]}`},
		{"acquire", `{"edge":"e1","region":"eu","max_nodes":50,"wait":"30s","request_id":"0123456789abcdef"}`},
		{"acquire", `{"edge":"e1","region":"eu","max_nodes":1e3,"wait":30}`},
		{"acquire", `{"edge":"e1","region":"eu","max_nodes":-1,"wait":"-1s"}`},
		{"acquire", `{"edge":"e1","region":"eu","max_nodes":10000,"wait":"5m0.000000001s"}`},
		{"acquire", `{"edge":"e1","region":"eu","max_nodes":1,"wait":"9999999999h"}`},
		{"acquire", `{"edge":"e1","region":"eu","max_nodes":1,"wait":null}`},
		{"renew", `{"lease_id":"l-7","token":18446744073709551615,"edge":"e1","region":"eu"}`},
		{"renew", `{"lease_id":"l-7","token":18446744073709551616,"edge":"e1","region":"eu"}`},
		{"renew", `{"lease_id":"l-7","token":-1,"edge":"e1","region":"eu"}`},
		{"report", `{"lease_id":"l-7","token":9,"edge":"e1","region":"eu","results":[{"identity":"n1","outcome":"provisioned","version":"0.30.0"},{"identity":"n2","outcome":"failed","error":"rpc: timeout"}],"request_id":"r1"}`},
		{"report", `{"lease_id":"l-7","token":9,"edge":"e1","region":"eu","results":[{"identity":"n1","outcome":"exploded"},{"identity":"n1","outcome":"gone"},{"identity":"n1","outcome":"gone"}]}`},
		{"heartbeat", `{"edge":"e1","region":"eu","leases":["l-1","l-2"]}`},
		{"heartbeat", `{"edge":"e1","region":"eu","leases":[]}`},
		{"heartbeat", `{"edge":"e1","region":"eu","leases":["l 1"]}`},
		{"pause", ``},
		{"pause", `{"reason":"maintenance window"}`},
		{"pause", `{"reason":"x"} {"reason":"y"}`},
		{"resume", `{}`},
		{"resume", `{"x":1}`},
		{"join", `{"id":"c2","raft_address":"10.0.0.2:7000","api_address":"https://10.0.0.2:8443","protocol":3}`},
		{"join", `{"id":"c2","raft_address":"10.0.0.2:7000","api_address":"https://10.0.0.2:8443/path?q#f"}`},
		{"remove", `{"id":"c2"}`},
		{"retry", `{"nodes":["n1","n2"],"request_id":"r1"}`},
		{"retry", `{"region":"eu","state":"abandoned","limit":10,"dry_run":true}`},
		{"retry", `{"nodes":[],"region":"eu","state":"gone"}`},
		{"retry", `{"nodes":["n1","n1"]}`},
		{"acquire", `{"edge":"e1"}]`},
		{"acquire", `[{"edge":"e1"}]`},
		{"acquire", `{"edge":"e1"`},
		{"acquire", `null`},
	} {
		f.Add(kindOf[s.kind], []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, kind uint8, body []byte) {
		b := bodies[int(kind)%len(bodies)]
		req := reflect.New(b.typ).Interface()
		if aerr := decodeStrict(body, req, b.emptyOK); aerr != nil {
			if aerr.status != http.StatusBadRequest || aerr.msg == "" {
				t.Fatalf("%s: refused %q with %d %q, want 400 and a message", b.name, body, aerr.status, aerr.msg)
			}
			return
		}
		if err := validate(req); err != nil {
			if err.Error() == "" {
				t.Fatalf("%s: %q refused with an empty message", b.name, body)
			}
			return
		}
		checkSplit(t, req)

		again, err := json.Marshal(req)
		if err != nil {
			t.Fatalf("%s: accepted %q but cannot encode it: %v", b.name, body, err)
		}
		req2 := reflect.New(b.typ).Interface()
		if aerr := decodeStrict(again, req2, b.emptyOK); aerr != nil {
			t.Fatalf("%s: accepted %q, refused its encoding %q: %s", b.name, body, again, aerr.msg)
		}
		if err := validate(req2); err != nil {
			t.Fatalf("%s: accepted %q, refused its encoding %q: %v", b.name, body, again, err)
		}
		if n1, n2 := normalized(t, req), normalized(t, req2); !reflect.DeepEqual(n1, n2) {
			t.Fatalf("%s: %q decodes to %+v, its encoding %q to %+v", b.name, body, n1, again, n2)
		}
		if s1, s2 := splitOf(req), splitOf(req2); s1 != s2 {
			t.Fatalf("%s: %q splits into %s, its encoding %q into %s", b.name, body, s1, again, s2)
		}
	})
}

// validate runs the request's Validate, as postJSON does.
func validate(req any) error {
	if v, ok := req.(validator); ok {
		return v.Validate()
	}
	return nil
}

// checkSplit fails t unless a register's or report's split accounts for every item once: the
// accepted ones pass the item check and name distinct nodes, each refusal names its item.
func checkSplit(t *testing.T, req any) {
	t.Helper()
	var total int
	var accepted []string
	var rejected []api.RejectedResult
	var prefix string
	switch r := req.(type) {
	case *api.RegisterRequest:
		ok, rej := r.SplitNodes()
		for _, n := range ok {
			if err := api.CheckNode(0, n); err != nil {
				t.Fatalf("SplitNodes accepted a node CheckNode refuses: %v", err)
			}
			accepted = append(accepted, n.Identity)
		}
		total, rejected, prefix = len(r.Nodes), rej, "nodes["
	case *api.ReportRequest:
		ok, rej := r.SplitResults()
		for _, res := range ok {
			if err := api.CheckResult(0, res); err != nil {
				t.Fatalf("SplitResults accepted a result CheckResult refuses: %v", err)
			}
			accepted = append(accepted, res.Identity)
		}
		total, rejected, prefix = len(r.Results), rej, "results["
	default:
		return
	}
	if len(accepted)+len(rejected) != total {
		t.Fatalf("%d items split into %d accepted and %d refused", total, len(accepted), len(rejected))
	}
	seen := map[string]bool{}
	for _, id := range accepted {
		if seen[id] {
			t.Fatalf("%q accepted twice", id)
		}
		seen[id] = true
	}
	for _, r := range rejected {
		if !strings.HasPrefix(r.Reason, prefix) {
			t.Fatalf("refusal of %q does not name its item: %q", r.Identity, r.Reason)
		}
	}
}

// splitOf renders a register's or report's split, "" for other requests.
func splitOf(req any) string {
	switch r := req.(type) {
	case *api.RegisterRequest:
		ok, rej := r.SplitNodes()
		ids := make([]string, len(ok))
		for i, n := range ok {
			ids[i] = n.Identity
		}
		return fmt.Sprintf("%q %q", ids, rej)
	case *api.ReportRequest:
		ok, rej := r.SplitResults()
		return fmt.Sprintf("%q %q", ok, rej)
	}
	return ""
}

// normalized is a copy of req with what its encoding may change without changing its meaning
// made canonical: an empty list omitted (omitempty) reads back as none, and facts, kept as raw
// JSON, are compacted and HTML-escaped by json.Marshal.
func normalized(t *testing.T, req any) any {
	t.Helper()
	switch r := req.(type) {
	case *api.RegisterRequest:
		c := *r
		c.Nodes = make([]api.RegisterNode, len(r.Nodes))
		for i, n := range r.Nodes {
			if len(n.Facts) > 0 {
				n.Facts = canonicalJSON(t, n.Facts)
			}
			c.Nodes[i] = n
		}
		return c
	case *api.HeartbeatRequest:
		c := *r
		if len(c.Leases) == 0 {
			c.Leases = nil
		}
		return c
	case *api.RetryRequest:
		c := *r
		if len(c.Nodes) == 0 {
			c.Nodes = nil
		}
		return c
	}
	return reflect.ValueOf(req).Elem().Interface()
}

// canonicalJSON re-encodes raw from its decoded value, numbers kept as written.
func canonicalJSON(t *testing.T, raw json.RawMessage) json.RawMessage {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("facts %q accepted but not readable: %v", raw, err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("facts %q: %v", raw, err)
	}
	return out
}
