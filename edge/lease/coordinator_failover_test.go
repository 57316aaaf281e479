// SPDX-License-Identifier: Apache-2.0

package lease_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// edgeHTTP is the edge's transport towards the coordinators as app/coordinator.go builds it:
// only its answer timeout (30 s) would end a request to a member that went silent.
func edgeHTTP() *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		ResponseHeaderTimeout: 30 * time.Second,
	}}
}

func renewAnswer(ttl time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req api.RenewRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		_ = json.NewEncoder(w).Encode(api.RenewResponse{Lease: api.Lease{ID: req.LeaseID, Edge: req.Edge, Region: req.Region, Token: req.Token, TTL: api.Duration(ttl)}})
	}
}

func heartbeatAnswer(paused bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(api.HeartbeatResponse{PauseState: api.PauseState{Paused: paused}})
	}
}

func twoMemberSource(t *testing.T, leader, other string, heartbeat time.Duration) (*api.Client, *lease.Coordinator) {
	t.Helper()
	client, err := api.NewClient([]string{leader, other}, api.WithHTTPClient(edgeHTTP()))
	if err != nil {
		t.Fatal(err)
	}
	o := lease.DefaultCoordinatorOptions()
	o.Client, o.Edge, o.Region, o.Heartbeat = client, "edge-eu-1", "eu", heartbeat
	src, err := lease.NewCoordinator(o)
	if err != nil {
		t.Fatal(err)
	}
	return client, src
}

// withinTheTransportTimeout fails the test unless f returns well before the transport's 30 s
// answer timeout could have ended a request to the silent member.
func withinTheTransportTimeout[T any](t *testing.T, what string, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(15 * time.Second):
		t.Fatalf("%s waited on the silent leader as long as the transport lets it", what)
	}
	panic("unreachable")
}

// A renewal sent to a leader that went silent is sent to another member within the same call,
// well inside the lease's own third of a TTL: the edge does not lose a lease a healthy new leader
// would renew. (The lease's TTL of 1.2 s scales the default 30 s down 25 times.)
func TestCoordinator_RenewLeavesASilentLeaderWithinTheCall(t *testing.T) {
	const ttl = 1200 * time.Millisecond
	old := testkit.NewSilent(t, renewAnswer(ttl))
	healthy := testkit.NewSilent(t, renewAnswer(ttl))
	client, src := twoMemberSource(t, old.URL, healthy.URL, time.Hour)
	l := api.Lease{ID: "l-1", Edge: "edge-eu-1", Region: "eu", Nodes: []string{"n1"}, Token: 4, TTL: api.Duration(ttl)}
	if _, err := src.Renew(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	if client.Leader() != old.URL {
		t.Fatalf("leader %q after the first renewal, want %s", client.Leader(), old.URL)
	}

	old.Cut()
	type result struct {
		g   lease.Grant
		err error
	}
	r := withinTheTransportTimeout(t, "the renewal", func() result {
		g, err := src.Renew(context.Background(), l)
		return result{g, err}
	})
	if r.err != nil || r.g.Lease == nil || r.g.Lease.ID != "l-1" {
		t.Fatalf("renewal after the leader went silent: %+v, %v", r.g, r.err)
	}
	if old.Calls() != 1 {
		t.Errorf("the silent leader was asked %d times, want once", old.Calls())
	}
	if client.Leader() != healthy.URL {
		t.Errorf("leader %q, want the member that answered, %s", client.Leader(), healthy.URL)
	}
}

// Heartbeats leave a leader that went silent during an operator pause: the edge learns from the
// member that answers that the operator resumed.
func TestCoordinator_HeartbeatsLeaveASilentLeader(t *testing.T) {
	old := testkit.NewSilent(t, heartbeatAnswer(true))
	healthy := testkit.NewSilent(t, heartbeatAnswer(false))
	_, src := twoMemberSource(t, old.URL, healthy.URL, 10*time.Millisecond)
	flags := watchPause(t, src)

	if !(<-flags).paused {
		t.Fatal("the first heartbeat did not read the pause")
	}
	old.Cut()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case f := <-flags:
			if !f.paused {
				return
			}
		case <-deadline:
			t.Fatalf("no heartbeat left the silent leader (it was asked %d times since it went silent)", old.Calls())
		}
	}
}

// An acquire (its long poll plus 5 s) and a report (10 s) sent to a leader that went silent are
// sent to another member within the same call, not held for the transport's 30 s.
func TestCoordinator_AcquireAndReportLeaveASilentLeaderWithinTheCall(t *testing.T) {
	grant := func(w http.ResponseWriter, r *http.Request) {
		var req api.AcquireRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		_ = json.NewEncoder(w).Encode(api.AcquireResponse{Lease: &api.Lease{ID: "l-2", Edge: req.Edge, Region: req.Region, Nodes: []string{"n1"}, Token: 1, TTL: api.Duration(30 * time.Second)}})
	}
	applied := func(w http.ResponseWriter, r *http.Request) {
		var req api.ReportRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		_ = json.NewEncoder(w).Encode(api.ReportResponse{Applied: []string{req.Results[0].Identity}})
	}
	for _, tc := range []struct {
		name   string
		answer http.HandlerFunc
		call   func(*lease.Coordinator) error
	}{
		{"acquire", grant, func(src *lease.Coordinator) error {
			g, err := src.Acquire(context.Background(), 1, 100*time.Millisecond)
			if err == nil && g.Lease == nil {
				err = errors.New("no lease granted")
			}
			return err
		}},
		{"report", applied, func(src *lease.Coordinator) error {
			resp, err := src.Report(context.Background(), api.Lease{ID: "l-2", Token: 1}, []api.NodeResult{{Identity: "n1", Outcome: api.OutcomeProvisioned}})
			if err == nil && len(resp.Applied) != 1 {
				err = fmt.Errorf("answer %+v", resp)
			}
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			old := testkit.NewSilent(t, tc.answer)
			healthy := testkit.NewSilent(t, tc.answer)
			client, src := twoMemberSource(t, old.URL, healthy.URL, time.Hour)
			if err := tc.call(src); err != nil || client.Leader() != old.URL {
				t.Fatalf("first %s: %v (leader %q)", tc.name, err, client.Leader())
			}
			old.Cut()
			if err := withinTheTransportTimeout(t, "the "+tc.name, func() error { return tc.call(src) }); err != nil {
				t.Fatalf("%s after the leader went silent: %v", tc.name, err)
			}
			if old.Calls() == 0 {
				t.Fatalf("the silent leader was never asked: the test proves nothing")
			}
		})
	}
}
