// SPDX-License-Identifier: Apache-2.0

package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/testkit"
)

func heartbeats(paused bool) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(HeartbeatResponse{PauseState: PauseState{Paused: paused}})
	}
}

// longTransport is the edge's transport as shipped: a silent member holds a request for 30 s
// before the transport gives up on it.
func longTransport() *http.Client {
	return &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: 30 * time.Second}}
}

var hb = HeartbeatRequest{Edge: "e1", Region: "ams"}

// A call whose context ends while the leader holds it leaves the client not pinned to that
// member: the next call asks another one first.
func TestClient_AContextEndedOnASilentLeaderForgetsIt(t *testing.T) {
	old := testkit.NewSilent(t, heartbeats(true))
	healthy := newMember(t, heartbeats(false))
	c, err := NewClient([]string{old.URL, healthy.srv.URL}, WithHTTPClient(longTransport()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Heartbeat(context.Background(), hb); err != nil || c.Leader() != old.URL {
		t.Fatalf("first heartbeat: %v, leader %q", err, c.Leader())
	}
	old.Cut()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	_, err = c.Heartbeat(ctx, hb)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the call's deadline", err)
	}
	if c.Leader() == old.URL {
		t.Fatal("the client still takes the silent member for the leader")
	}
	resp, err := c.Heartbeat(context.Background(), hb)
	if err != nil || resp.Paused {
		t.Fatalf("next heartbeat: %+v, %v; want the healthy member's answer", resp, err)
	}
	if old.Calls() != 1 || healthy.calls.Load() != 1 {
		t.Errorf("after the cut: %d calls to the silent member, %d to the healthy one; want 1 and 1", old.Calls(), healthy.calls.Load())
	}
}

func renews(w http.ResponseWriter, r *http.Request) {
	var req RenewRequest
	_ = json.NewDecoder(r.Body).Decode(&req)
	_ = json.NewEncoder(w).Encode(RenewResponse{Lease: Lease{ID: req.LeaseID, Token: req.Token, TTL: Duration(30 * time.Second)}})
}

// within is a context well short of the transport's 30 s: a call that succeeds under it did not
// wait for the transport to give up on a silent member.
func within(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// A renewal whose attempt on the leader outlasts its attempt timeout goes to the next member
// within the same call, and that member is the leader from then on.
func TestClient_AnAttemptTimeoutMovesTheCallOffASilentLeader(t *testing.T) {
	old := testkit.NewSilent(t, renews)
	healthy := newMember(t, renews)
	c, _ := NewClient([]string{old.URL, healthy.srv.URL}, WithHTTPClient(longTransport()))
	req := RenewRequest{LeaseID: "l-1", Token: 3, Edge: "e1", Region: "ams"}
	if _, err := c.Renew(context.Background(), req, AttemptTimeout(200*time.Millisecond)); err != nil || c.Leader() != old.URL {
		t.Fatalf("first renewal: %v, leader %q", err, c.Leader())
	}
	old.Cut()
	resp, err := c.Renew(within(t), req, AttemptTimeout(200*time.Millisecond))
	if err != nil || resp.Lease.ID != "l-1" {
		t.Fatalf("renewal after the leader went silent: %+v, %v", resp, err)
	}
	if c.Leader() != healthy.srv.URL || old.Calls() != 1 {
		t.Fatalf("leader %q after %d calls to the silent member; want %s after 1", c.Leader(), old.Calls(), healthy.srv.URL)
	}
}

// An attempt that ran out is told apart from the caller's own deadline.
func TestClient_AnAttemptTimeoutIsNotTheCallersDeadline(t *testing.T) {
	old := testkit.NewSilent(t, heartbeats(false))
	old.Cut()
	c, _ := NewClient([]string{old.URL}, WithHTTPClient(longTransport()), WithAttempts(2), WithRetryDelay(time.Millisecond))
	_, err := c.Heartbeat(within(t), hb, AttemptTimeout(50*time.Millisecond))
	if !errors.Is(err, ErrAttemptTimeout) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrAttemptTimeout and not the caller's deadline", err)
	}
	if old.Calls() != 2 {
		t.Errorf("%d attempts on the only member, want 2: a suspect is still asked when no other is left", old.Calls())
	}
}

// A follower goes on naming the leader it lost until it elects another: the client does not
// follow it back to the member that just went silent, and asks the rest first.
func TestClient_DoesNotFollowAFollowerBackToASilentLeader(t *testing.T) {
	old := testkit.NewSilent(t, heartbeats(true))
	follower := newMember(t, notLeader(old.URL))
	healthy := newMember(t, heartbeats(false))
	c, _ := NewClient([]string{old.URL, follower.srv.URL, healthy.srv.URL}, WithHTTPClient(longTransport()))
	if _, err := c.Heartbeat(context.Background(), hb); err != nil || c.Leader() != old.URL {
		t.Fatalf("first heartbeat: %v, leader %q", err, c.Leader())
	}
	old.Cut()
	for i := range 3 {
		resp, err := c.Heartbeat(within(t), hb, AttemptTimeout(200*time.Millisecond))
		if err != nil || resp.Paused {
			t.Fatalf("heartbeat %d: %+v, %v; want the healthy member's answer", i, resp, err)
		}
	}
	if old.Calls() != 1 {
		t.Errorf("the silent member was asked %d times, want once", old.Calls())
	}
}
