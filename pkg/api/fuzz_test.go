// SPDX-License-Identifier: Apache-2.0

package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fuzzAnswer is what one member answers to every request it gets.
type fuzzAnswer struct {
	status   int
	leader   string // X-Muster-Leader
	location string
	body     []byte
}

// fuzzTransport answers each member's requests with that member's answer and records where
// every request went and what credential it carried.
type fuzzTransport struct {
	answers map[string]fuzzAnswer // by scheme://host

	mu   sync.Mutex
	sent []string // scheme://host of every request
}

func (ft *fuzzTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	addr := req.URL.Scheme + "://" + req.URL.Host
	ft.mu.Lock()
	ft.sent = append(ft.sent, addr)
	ft.mu.Unlock()
	a, ok := ft.answers[addr]
	if !ok {
		return nil, errors.New("no such member")
	}
	h := http.Header{}
	if a.leader != "" {
		h.Set(HeaderLeader, a.leader)
	}
	if a.location != "" {
		h.Set("Location", a.location)
	}
	return &http.Response{StatusCode: a.status, Header: h, Body: io.NopCloser(bytes.NewReader(a.body)), Request: req}, nil
}

// FuzzClientAnswer gives the client any answers from its two members (status, leader header,
// redirect location, body) and checks what it does with them: it never panics, gives up within
// its attempts, sends its requests (and so its bearer token) only to the members it was
// configured with whatever leader an answer names, succeeds only on a 2xx answer, and an error
// it returns names only a well-formed leader address.
func FuzzClientAnswer(f *testing.F) {
	const a, b = "https://a.example:8443", "https://b.example:8443"
	lease := `{"lease":{"id":"l-1","edge":"e1","region":"eu","nodes":["n1"],"token":9,"expires_at":"2026-01-02T03:04:05Z","ttl":"1m0s"},"paused":false,"held":"10ms","queue":{"waiting":3,"leased":1}}`
	notLeader := func(leader string) []byte {
		return []byte(`{"error":"not the leader","code":"not_leader","leader":"` + leader + `"}`)
	}
	for _, s := range []struct {
		kind     uint8
		s1       uint16
		l1, loc1 string
		b1       []byte
		s2       uint16
		l2, loc2 string
		b2       []byte
	}{
		{0, 200, "", "", []byte(lease), 200, "", "", []byte(lease)},
		{0, 421, b, "", notLeader(b), 200, "", "", []byte(lease)},
		{0, 421, "", "", notLeader("http://b.example:8443"), 421, "", "", notLeader("https://evil.example:8443")},
		{0, 421, "HTTPS://B.EXAMPLE:8443/", "", notLeader(""), 200, "", "", []byte(`{"lease":null}`)},
		{1, 307, "", "https://evil.example:8443/v1/report", nil, 308, "", "http://a.example:8443/x", nil},
		{1, 200, "", "", []byte(`{"applied":["n1"],"rejected":[{"identity":"n2","reason":"stale"}]}`), 503, "", "", []byte("no leader")},
		{2, 200, "https://b.example:8443", "", []byte(`{"id":"c1","state":"Leader","members":[],"regions":{"eu":{"waiting":1}}}`), 500, "", "", nil},
		{3, 200, "", "", []byte(`{"nodes":[{"identity":"n1","region":"eu","state":"waiting","facts":{"a":1},"discovered_at":"2026-01-02T03:04:05Z"}],"next":"n2"}`), 0, "", "", nil},
		{0, 200, "", "", []byte(`{"lease":{"ttl":30}}`), 200, "", "", []byte(`{"lease":` + strings.Repeat("[", 20000) + `}`)},
		{0, 400, "", "", []byte(`{"error":"","code":"bad_request"}`), 599, "https://a.example:8443?x", "", []byte(`{"error":"x","code":"not_leader","leader":"https://a.example:8443/x"}`)},
		{2, 204, "", "", nil, 999, "", "", []byte("\xff\xfe")},
	} {
		f.Add(s.kind, s.s1, s.l1, s.loc1, s.b1, s.s2, s.l2, s.loc2, s.b2)
	}
	f.Fuzz(func(t *testing.T, kind uint8, s1 uint16, l1, loc1 string, b1 []byte, s2 uint16, l2, loc2 string, b2 []byte) {
		ft := &fuzzTransport{answers: map[string]fuzzAnswer{
			a: {status: int(s1), leader: l1, location: loc1, body: b1},
			b: {status: int(s2), leader: l2, location: loc2, body: b2},
		}}
		const attempts = 6
		c, err := NewClient([]string{a, b}, WithHTTPClient(&http.Client{Transport: ft}), WithToken("t"),
			WithAttempts(attempts), WithRetryDelay(time.Microsecond))
		if err != nil {
			t.Fatal(err)
		}
		// The deadline only stops a client that loops; every answer here is immediate.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		switch kind % 4 {
		case 0:
			_, err = c.Acquire(ctx, AcquireRequest{Edge: "e1", Region: "eu", MaxNodes: 5})
		case 1:
			_, err = c.Report(ctx, ReportRequest{LeaseID: "l-1", Token: 9, Edge: "e1", Region: "eu", Results: []NodeResult{{Identity: "n1", Outcome: OutcomeProvisioned}}})
		case 2:
			_, err = c.Status(ctx)
		case 3:
			_, err = c.Nodes(ctx, NodeFilter{Region: "eu"})
		}
		if ctx.Err() != nil {
			t.Fatalf("the call did not end within 30s of immediate answers: %v", err)
		}
		if len(ft.sent) > attempts {
			t.Fatalf("%d requests sent, attempts are %d", len(ft.sent), attempts)
		}
		for _, to := range ft.sent {
			if to != a && to != b {
				t.Fatalf("a request went to %s, which is not a configured member (sent %q)", to, ft.sent)
			}
		}
		if err == nil {
			last := ft.answers[ft.sent[len(ft.sent)-1]]
			if last.status < 200 || last.status > 299 {
				t.Fatalf("the call succeeded on a %d answer", last.status)
			}
		}
		var apiErr *Error
		if errors.As(err, &apiErr) && apiErr.Leader != "" {
			if verr := ValidateBaseURL("leader", apiErr.Leader); verr != nil {
				t.Fatalf("the error names a malformed leader: %v", verr)
			}
		}
		if l := c.Leader(); l != "" && !slices.Contains([]string{a, b}, l) {
			t.Fatalf("the client took %q as its leader", l)
		}
	})
}
