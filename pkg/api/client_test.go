// SPDX-License-Identifier: Apache-2.0

package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/testkit"
)

const testToken = "edge-token-for-tests"

// member is an HTTP fixture standing in for one coordinator member's answers.
type member struct {
	srv   *httptest.Server
	calls atomic.Int64
}

func newMember(t *testing.T, h func(w http.ResponseWriter, r *http.Request)) *member {
	t.Helper()
	m := &member{}
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.calls.Add(1)
		h(w, r)
	}))
	t.Cleanup(m.srv.Close)
	return m
}

func notLeader(leader string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusMisdirectedRequest)
		_ = json.NewEncoder(w).Encode(ErrorBody{Error: "not the leader", Code: CodeNotLeader, Leader: leader})
	}
}

// leaderHandler grants a lease to any well-formed acquire carrying the token.
func leaderHandler(t *testing.T) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(ErrorBody{Error: "no token", Code: CodeUnauthorized})
			return
		}
		var req AcquireRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("leader got an unreadable body: %v", err)
		}
		_ = json.NewEncoder(w).Encode(AcquireResponse{Lease: &Lease{ID: "l-1", Edge: req.Edge, Region: req.Region, Nodes: []string{"n1"}, Token: 9}})
	}
}

func acquire(c *Client, ctx context.Context) (AcquireResponse, error) {
	return c.Acquire(ctx, AcquireRequest{Edge: "e1", Region: "ams", MaxNodes: 1})
}

func TestClient_FollowsNotLeaderToTheLeaderAndRemembersIt(t *testing.T) {
	leader := newMember(t, leaderHandler(t))
	follower := newMember(t, notLeader(leader.srv.URL))
	c, err := NewClient([]string{follower.srv.URL, leader.srv.URL}, WithToken(testToken))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		resp, err := acquire(c, context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if resp.Lease == nil || resp.Lease.Token != 9 || resp.Lease.Region != "ams" {
			t.Fatalf("lease = %+v", resp.Lease)
		}
	}
	if follower.calls.Load() != 1 || leader.calls.Load() != 3 {
		t.Errorf("follower got %d calls, leader %d; want 1 and 3", follower.calls.Load(), leader.calls.Load())
	}
	if c.Leader() != leader.srv.URL {
		t.Errorf("Leader() = %q, want %q", c.Leader(), leader.srv.URL)
	}
}

func TestClient_FollowsATemporaryRedirectWithBodyAndToken(t *testing.T) {
	leader := newMember(t, leaderHandler(t))
	redirector := newMember(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, leader.srv.URL+r.URL.Path, http.StatusTemporaryRedirect)
	})
	c, _ := NewClient([]string{redirector.srv.URL, leader.srv.URL}, WithToken(testToken))
	if _, err := acquire(c, context.Background()); err != nil {
		t.Fatal(err)
	}
	if leader.calls.Load() != 1 {
		t.Fatalf("leader calls = %d", leader.calls.Load())
	}
}

func TestClient_SkipsAMemberThatIsDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close()
	leader := newMember(t, leaderHandler(t))
	c, _ := NewClient([]string{down, leader.srv.URL}, WithToken(testToken))
	if _, err := acquire(c, context.Background()); err != nil {
		t.Fatal(err)
	}
	if c.Leader() != leader.srv.URL {
		t.Errorf("Leader() = %q after skipping the dead member", c.Leader())
	}
}

func TestClient_RemembersTheLeaderAForwardingMemberNames(t *testing.T) {
	leader := newMember(t, leaderHandler(t))
	forwarder := newMember(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(HeaderLeader, leader.srv.URL)
		_ = json.NewEncoder(w).Encode(AcquireResponse{})
	})
	c, _ := NewClient([]string{forwarder.srv.URL, leader.srv.URL}, WithToken(testToken))
	if _, err := acquire(c, context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := acquire(c, context.Background()); err != nil {
		t.Fatal(err)
	}
	if forwarder.calls.Load() != 1 || leader.calls.Load() != 1 {
		t.Errorf("forwarder %d calls, leader %d; the second call should go to the leader", forwarder.calls.Load(), leader.calls.Load())
	}
}

func TestClient_ReturnsAClientErrorAtOnceWithItsCode(t *testing.T) {
	m := newMember(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusConflict)
		_ = json.NewEncoder(w).Encode(ErrorBody{Error: "lease l-1: token 3 is not 9", Code: CodeTokenMismatch})
	})
	other := newMember(t, leaderHandler(t))
	c, _ := NewClient([]string{m.srv.URL, other.srv.URL}, WithToken(testToken))
	_, err := c.Renew(context.Background(), RenewRequest{LeaseID: "l-1", Token: 3, Edge: "e1", Region: "ams"})
	if !IsCode(err, CodeTokenMismatch) || !strings.Contains(err.Error(), "token 3 is not 9") {
		t.Fatalf("err = %v", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Status != http.StatusConflict {
		t.Fatalf("err = %#v", err)
	}
	if m.calls.Load() != 1 || other.calls.Load() != 0 {
		t.Errorf("a 409 was retried: %d and %d calls", m.calls.Load(), other.calls.Load())
	}
}

func TestClient_DoesNotRepeatARefusalAFollowerRelayedAtTheLeader(t *testing.T) {
	leader := newMember(t, leaderHandler(t))
	// A follower forwards to the leader and relays its answer; every answer it gives names the leader.
	follower := newMember(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(HeaderLeader, leader.srv.URL)
		w.WriteHeader(http.StatusConflict)
		_ = json.NewEncoder(w).Encode(ErrorBody{Error: "lease l-1: token 3 is not 9", Code: CodeTokenMismatch})
	})
	c, _ := NewClient([]string{follower.srv.URL}, WithToken(testToken))
	_, err := c.Report(context.Background(), ReportRequest{LeaseID: "l-1", Token: 3, Edge: "e1", Region: "ams",
		Results: []NodeResult{{Identity: "n1", Outcome: OutcomeProvisioned}}})
	if !IsCode(err, CodeTokenMismatch) {
		t.Fatalf("err = %v", err)
	}
	if follower.calls.Load() != 1 || leader.calls.Load() != 0 {
		t.Errorf("the refusal was sent again: follower %d calls, leader %d", follower.calls.Load(), leader.calls.Load())
	}
}

func TestClient_GivesUpAfterItsAttemptsWithoutALeader(t *testing.T) {
	var m [2]*member
	for i := range m {
		m[i] = newMember(t, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusServiceUnavailable)
			_ = json.NewEncoder(w).Encode(ErrorBody{Error: "no leader is known", Code: CodeNoLeader})
		})
	}
	c, _ := NewClient([]string{m[0].srv.URL, m[1].srv.URL}, WithAttempts(5), WithRetryDelay(time.Millisecond))
	_, err := c.Status(context.Background())
	if !IsCode(err, CodeNoLeader) || !strings.Contains(err.Error(), "gave up after 5 attempts") {
		t.Fatalf("err = %v", err)
	}
	if got := m[0].calls.Load() + m[1].calls.Load(); got != 5 {
		t.Errorf("%d calls, want 5", got)
	}
}

func TestClient_StopsWhenTheContextEnds(t *testing.T) {
	m := newMember(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(ErrorBody{Error: "no leader", Code: CodeNoLeader})
	})
	// The first answer has been read in full once the client closes its body; only then does the
	// test cancel, so the client is past that answer (in its retry delay) and not mid-request.
	answered := make(chan struct{})
	var once sync.Once
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err == nil {
			resp.Body = closeNotifier{ReadCloser: resp.Body, closed: func() { once.Do(func() { close(answered) }) }}
		}
		return resp, err
	})}
	c, _ := NewClient([]string{m.srv.URL}, WithHTTPClient(hc), WithAttempts(1_000_000), WithRetryDelay(time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := c.Status(ctx); done <- err }()
	select {
	case <-answered:
	case err := <-done:
		t.Fatalf("the client returned before its retry delay: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the member never answered")
	}
	cancel()
	if err := testkit.Receive(t, done, 30*time.Second, "the client to return after its context was cancelled"); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "no leader") {
		t.Fatalf("err = %v", err)
	}
	if got := m.calls.Load(); got != 1 {
		t.Errorf("%d calls, want 1: the retry delay of an hour cannot have passed", got)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// closeNotifier calls closed when the client closes the body it has read.
type closeNotifier struct {
	io.ReadCloser
	closed func()
}

func (c closeNotifier) Close() error {
	err := c.ReadCloser.Close()
	c.closed()
	return err
}

func TestClient_IgnoresAMalformedLeaderAddress(t *testing.T) {
	m := newMember(t, notLeader("javascript:alert(1)"))
	c, _ := NewClient([]string{m.srv.URL}, WithAttempts(2), WithRetryDelay(time.Millisecond))
	_, err := acquire(c, context.Background())
	if !IsCode(err, CodeNotLeader) {
		t.Fatalf("err = %v", err)
	}
	if c.Leader() != "" {
		t.Errorf("Leader() = %q", c.Leader())
	}
}

func TestNewClient_RefusesBadAddresses(t *testing.T) {
	for _, in := range [][]string{nil, {"127.0.0.1:8000"}, {"http://h:1/path"}} {
		if _, err := NewClient(in); err == nil {
			t.Errorf("NewClient(%v) accepted", in)
		}
	}
}

func TestClient_AcquireSendsOneFreshRequestIDPerCallAndKeepsItAcrossRetries(t *testing.T) {
	var mu sync.Mutex
	var ids []string
	failNext := true
	m := newMember(t, func(w http.ResponseWriter, r *http.Request) {
		var req AcquireRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("unreadable acquire: %v", err)
		}
		if err := req.Validate(); err != nil {
			t.Errorf("the client sent an acquire the server refuses: %v", err)
		}
		mu.Lock()
		ids = append(ids, req.RequestID)
		fail := failNext
		failNext = false
		mu.Unlock()
		if fail { // the first try of the first call meets an election
			w.WriteHeader(http.StatusServiceUnavailable)
			_ = json.NewEncoder(w).Encode(ErrorBody{Error: "no leader", Code: CodeNoLeader})
			return
		}
		_ = json.NewEncoder(w).Encode(AcquireResponse{})
	})
	c, _ := NewClient([]string{m.srv.URL}, WithRetryDelay(time.Millisecond))
	req := AcquireRequest{Edge: "e1", Region: "ams", MaxNodes: 1}
	for range 2 {
		if _, err := c.Acquire(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if req.RequestID != "" {
		t.Errorf("the caller's request was changed: %q", req.RequestID)
	}
	req.RequestID = "edge-e1-acquire-42"
	if _, err := c.Acquire(context.Background(), req); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(ids) != 4 {
		t.Fatalf("ids = %q, want 4 requests (a retried call, a second call, a call with its own id)", ids)
	}
	if ids[0] == "" || ids[0] != ids[1] {
		t.Errorf("the retry of one call carried another id: %q then %q", ids[0], ids[1])
	}
	if ids[2] == "" || ids[2] == ids[0] {
		t.Errorf("a second call reused the first call's id: %q", ids)
	}
	if ids[3] != "edge-e1-acquire-42" {
		t.Errorf("a caller's id was replaced: %q", ids[3])
	}
}

// TestClient_FollowsOnlyConfiguredMembers: a member naming a leader the client was not
// configured with (a compromised or misconfigured member, a plain-http downgrade of an https
// member) is not followed, by a not-leader answer, a leader header or a redirect: the bearer
// token never reaches that address.
func TestClient_FollowsOnlyConfiguredMembers(t *testing.T) {
	var got atomic.Int64
	rogue := newMember(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			got.Add(1)
		}
		leaderHandler(t)(w, r)
	})
	for name, h := range map[string]func(w http.ResponseWriter, r *http.Request){
		"not-leader answer": notLeader(rogue.srv.URL),
		"leader header": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set(HeaderLeader, rogue.srv.URL)
			w.WriteHeader(http.StatusServiceUnavailable)
			_ = json.NewEncoder(w).Encode(ErrorBody{Error: "electing", Code: CodeUnavailable})
		},
		"redirect": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, rogue.srv.URL+r.URL.Path, http.StatusTemporaryRedirect)
		},
	} {
		t.Run(name, func(t *testing.T) {
			m := newMember(t, h)
			c, _ := NewClient([]string{m.srv.URL}, WithToken(testToken), WithAttempts(3), WithRetryDelay(time.Millisecond))
			if _, err := acquire(c, context.Background()); err == nil {
				t.Fatal("the call succeeded through an address the client was not configured with")
			}
			if got.Load() != 0 || c.Leader() == rogue.srv.URL {
				t.Fatalf("the token reached an unconfigured leader %d times (leader %q)", got.Load(), c.Leader())
			}
		})
	}
	// The same host over plain http is another address: an https member cannot downgrade it.
	https := strings.Replace(rogue.srv.URL, "http://", "https://", 1)
	c, _ := NewClient([]string{https}, WithToken(testToken))
	if c.configured(rogue.srv.URL) != "" || c.configured(https) != https {
		t.Fatalf("configured(%q) = %q, configured(%q) = %q", rogue.srv.URL, c.configured(rogue.srv.URL), https, c.configured(https))
	}
}
