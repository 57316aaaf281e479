// SPDX-License-Identifier: Apache-2.0

package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestLease_RoundTripsWithSnakeCaseAndRFC3339Nano(t *testing.T) {
	exp := time.Date(2026, 11, 29, 15, 4, 5, 123456789, time.UTC)
	in := Lease{ID: "l-7", Edge: "edge-a", Region: "ams", Nodes: []string{"n1", "n2"}, Token: 7, ExpiresAt: exp, TTL: Duration(30 * time.Second)}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"expires_at":"2026-11-29T15:04:05.123456789Z"`, `"ttl":"30s"`, `"token":7`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("encoded lease %s lacks %s", b, want)
		}
	}
	var out Lease
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !out.ExpiresAt.Equal(exp) || out.TTL != in.TTL || out.Token != 7 || len(out.Nodes) != 2 {
		t.Errorf("round trip changed the lease: %+v", out)
	}
}

func TestDuration_RefusesBareNumbers(t *testing.T) {
	var r AcquireRequest
	err := json.Unmarshal([]byte(`{"edge":"e","region":"r","max_nodes":1,"wait":30}`), &r)
	if err == nil || !strings.Contains(err.Error(), "duration must be a string") {
		t.Fatalf("bare number accepted as a duration: %v", err)
	}
}

func TestNode_OmitsZeroTimes(t *testing.T) {
	b, err := json.Marshal(Node{Identity: "n1", Region: "ams", State: StateWaiting, DiscoveredAt: time.Unix(1, 0).UTC()})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "leased_at") || strings.Contains(string(b), "finished_at") {
		t.Errorf("zero times encoded: %s", b)
	}
}

// firstRefusal reads the first node or result a request's split refuses as a Validate error, so
// the per-item checks share the table with the request-wide ones.
type firstRefusal func() []RejectedResult

func (f firstRefusal) Validate() error {
	if r := f(); len(r) > 0 {
		return errors.New(r[0].Reason)
	}
	return nil
}

func nodesOf(r *RegisterRequest) firstRefusal {
	return func() []RejectedResult { _, rej := r.SplitNodes(); return rej }
}

func resultsOf(r *ReportRequest) firstRefusal {
	return func() []RejectedResult { _, rej := r.SplitResults(); return rej }
}

// TestValidate_NamesTheField: a request-wide problem fails Validate, a node's or result's is its
// refusal in the split; both name the field.
func TestValidate_NamesTheField(t *testing.T) {
	cases := []struct {
		name string
		v    interface{ Validate() error }
		want string
	}{
		{"register empty region", &RegisterRequest{Edge: "e", Nodes: []RegisterNode{{Identity: "n"}}}, "region: must not be empty"},
		{"register duplicate", nodesOf(&RegisterRequest{Region: "r", Edge: "e", Nodes: []RegisterNode{{Identity: "n"}, {Identity: "n"}}}), `nodes[1].identity: "n" repeats nodes[0]`},
		{"register space", nodesOf(&RegisterRequest{Region: "r", Edge: "e", Nodes: []RegisterNode{{Identity: "a b"}}}), "nodes[0].identity"},
		{"register bad facts", nodesOf(&RegisterRequest{Region: "r", Edge: "e", Nodes: []RegisterNode{{Identity: "a", Facts: json.RawMessage("{")}}}), "nodes[0].facts: not valid JSON"},
		{"acquire zero", &AcquireRequest{Edge: "e", Region: "r"}, "max_nodes: 0 is outside"},
		{"acquire long wait", &AcquireRequest{Edge: "e", Region: "r", MaxNodes: 1, Wait: Duration(time.Hour)}, "wait: 1h0m0s is outside"},
		{"register invalid UTF-8", nodesOf(&RegisterRequest{Region: "r", Edge: "e", Nodes: []RegisterNode{{Identity: "n\xff1"}}}), `nodes[0].identity: "n\xff1" is not valid UTF-8`},
		{"acquire request id with space", &AcquireRequest{Edge: "e", Region: "r", MaxNodes: 1, RequestID: "a b"}, `request_id: "a b" contains ' '`},
		{"acquire long request id", &AcquireRequest{Edge: "e", Region: "r", MaxNodes: 1, RequestID: strings.Repeat("f", MaxNameLength+1)}, "request_id: 254 bytes"},
		{"renew no token", &RenewRequest{LeaseID: "l", Edge: "e", Region: "r"}, "token: must not be 0"},
		{"carried report of another edge", &AcquireRequest{Edge: "e", Region: "r", MaxNodes: 1, Reports: []ReportRequest{{LeaseID: "l", Token: 3, Edge: "f", Region: "r", RequestID: "q", Results: []NodeResult{{Identity: "n", Outcome: OutcomeFailed}}}}}, `reports[0]: edge "f" in "r" is not the acquire's "e" in "r"`},
		{"carried report without request id", &AcquireRequest{Edge: "e", Region: "r", MaxNodes: 1, Reports: []ReportRequest{{LeaseID: "l", Token: 3, Edge: "e", Region: "r", Results: []NodeResult{{Identity: "n", Outcome: OutcomeFailed}}}}}, "reports[0].request_id: must not be empty"},
		{"carried report twice", &AcquireRequest{Edge: "e", Region: "r", MaxNodes: 1, Reports: []ReportRequest{
			{LeaseID: "l", Token: 3, Edge: "e", Region: "r", RequestID: "q", Results: []NodeResult{{Identity: "n", Outcome: OutcomeFailed}}},
			{LeaseID: "l", Token: 3, Edge: "e", Region: "r", RequestID: "q", Results: []NodeResult{{Identity: "n", Outcome: OutcomeFailed}}}}}, `reports[1].request_id: "q" is carried twice`},
		{"carried report without results", &AcquireRequest{Edge: "e", Region: "r", MaxNodes: 1, Reports: []ReportRequest{{LeaseID: "l", Token: 3, Edge: "e", Region: "r", RequestID: "q"}}}, "reports[0].results: must list"},
		{"report bad outcome", resultsOf(&ReportRequest{LeaseID: "l", Token: 3, Edge: "e", Region: "r", Results: []NodeResult{{Identity: "n", Outcome: "done"}}}), `results[0].outcome: "done"`},
		{"report none", &ReportRequest{LeaseID: "l", Token: 3, Edge: "e", Region: "r"}, "results: must list"},
		{"register space at", nodesOf(&RegisterRequest{Region: "r", Edge: "e", Nodes: []RegisterNode{{Identity: "a"}, {Identity: "b c"}}}), `nodes[1].identity: "b c" contains ' '`},
		{"register long version", nodesOf(&RegisterRequest{Region: "r", Edge: "e", Nodes: []RegisterNode{{Identity: "a", Version: strings.Repeat("9", MaxVersionLength+1)}}}), "nodes[0].version: 129 bytes, longer than 128"},
		{"report empty identity", resultsOf(&ReportRequest{LeaseID: "l", Token: 3, Edge: "e", Region: "r", Results: []NodeResult{{Identity: "n", Outcome: OutcomeFailed}, {Outcome: OutcomeFailed}}}), "results[1].identity: must not be empty"},
		{"report long error", resultsOf(&ReportRequest{LeaseID: "l", Token: 3, Edge: "e", Region: "r", Results: []NodeResult{{Identity: "n", Outcome: OutcomeFailed, Error: strings.Repeat("x", MaxErrorLength+1)}}}), "results[0].error: 4097 bytes"},
		{"heartbeat empty lease", &HeartbeatRequest{Edge: "e", Region: "r", Leases: []string{"l-1", ""}}, "leases[1]: must not be empty"},
		{"filter state", &NodeFilter{State: "vanished"}, `state: "vanished"`},
		{"join url", &JoinRequest{ID: "c2", RaftAddress: "127.0.0.1:7001", APIAddress: "127.0.0.1:8001"}, "api_address"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.v.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate() = %v, want it to contain %q", err, c.want)
			}
		})
	}
	ok := &JoinRequest{ID: "c2", RaftAddress: "127.0.0.1:7001", APIAddress: "http://127.0.0.1:8001"}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid join refused: %v", err)
	}
}

// BenchmarkRegisterRequest_Validate validates and splits a register of the largest size a request may carry.
func BenchmarkRegisterRequest_Validate(b *testing.B) {
	r := &RegisterRequest{Region: "ams", Edge: "edge-ams-1", Nodes: make([]RegisterNode, MaxRegisterNodes)}
	for i := range r.Nodes {
		r.Nodes[i] = RegisterNode{Identity: fmt.Sprintf("node-%05d.ams.example.net", i), Version: "0.29.4"}
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := r.Validate(); err != nil {
			b.Fatal(err)
		}
		if _, rej := r.SplitNodes(); len(rej) > 0 {
			b.Fatal(rej)
		}
	}
}
