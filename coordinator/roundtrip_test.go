// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/raftnode"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// A member measures the round trip to every other member's API and shows it in status; a Raft
// timeout that spans fewer than five of a measured round trip is named in the warnings, since
// elections would flap across that link. The far member is a non-voter whose API answers after
// 150 ms, as one in a datacenter a continent away would.
func TestService_StatusShowsTheRoundTripToEachMemberAndTheTimeoutsItMakesTooShort(t *testing.T) {
	const delay = 150 * time.Millisecond
	far := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
		}
		fmt.Fprintln(w, "ok")
	}))
	t.Cleanup(far.Close)
	svc, err := coordinator.New(coordinator.Config{
		ID: "c1", DataDir: filepath.Join(t.TempDir(), "c1"), RaftBind: "127.0.0.1:0", APIAddress: "http://127.0.0.1:1",
		Bootstrap: true, RoundTripInterval: 20 * time.Millisecond,
		Timeouts: raftnode.Timeouts{Heartbeat: 500 * time.Millisecond, Election: 500 * time.Millisecond, LeaderLease: 500 * time.Millisecond, Commit: 10 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	testkit.WaitFor(t, 30*time.Second, "c1 to lead", svc.IsLeader)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := svc.Join(ctx, api.JoinRequest{ID: "far", RaftAddress: "127.0.0.1:9", APIAddress: far.URL, NonVoter: true}); err != nil {
		t.Fatal(err)
	}

	var st api.StatusResponse
	testkit.WaitFor(t, 30*time.Second, "a round trip to far in c1's status", func() (bool, string) {
		st, err = svc.Status(ctx)
		if err != nil {
			return false, err.Error()
		}
		i := slices.IndexFunc(st.Members, func(m api.Member) bool { return m.ID == "far" })
		return i >= 0 && st.Members[i].RoundTrip > 0, fmt.Sprintf("%+v", st.Members)
	})
	for _, m := range st.Members {
		switch {
		case m.ID == "c1" && m.RoundTrip != 0:
			t.Errorf("c1 measured a round trip to itself: %v", m.RoundTrip)
		case m.ID == "far" && (time.Duration(m.RoundTrip) < delay || time.Duration(m.RoundTrip) > 10*delay):
			t.Errorf("round trip to far %v, want about %v", time.Duration(m.RoundTrip), delay)
		}
	}
	want := "raft.election_timeout 500ms is under 5 round trips to member far"
	if !slices.ContainsFunc(st.Warnings, func(w string) bool { return strings.Contains(w, want) }) {
		t.Fatalf("warnings %q lack %q", st.Warnings, want)
	}
}
