// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/seed96588659/muster/pkg/api"
)

// statusServer answers /v1/status with st (its API address filled in by members).
func statusServer(t *testing.T, st *api.StatusResponse) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(st)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestStatusCommand_AMemberCutOffIsNotTheCluster: the member asked first sees no quorum (it is
// the one cut off); another member that sees one is asked, its view is shown with a line naming
// the first, and status exits 0. When no member sees a quorum, status says so and exits 2.
func TestStatusCommand_AMemberCutOffIsNotTheCluster(t *testing.T) {
	yes, no := true, false
	cut := &api.StatusResponse{ID: "c3", State: "Candidate", Quorum: &no, NoQuorum: "member c3 is Candidate and knows no leader"}
	ok := &api.StatusResponse{ID: "c1", State: "Leader", LeaderID: "c1", Quorum: &yes}
	a, b := statusServer(t, cut), statusServer(t, ok)
	members := []api.Member{{ID: "c1", Voter: true, APIAddress: b.URL}, {ID: "c3", Voter: true, APIAddress: a.URL}}
	cut.Members, ok.Members = members, members
	t.Setenv("MUSTER_AUTH_ADMIN_TOKEN", "t")

	code, out, errOut := runCLI(t, "status", "--addr", a.URL)
	if code != 0 || !strings.Contains(out, "member c3, asked first, sees no quorum") || !strings.Contains(out, "member c1: Leader") {
		t.Fatalf("status with the cut-off member asked first: exit %d\n%s%s", code, out, errOut)
	}

	ok.Quorum, ok.LeaderID, ok.State = &no, "", "Candidate"
	code, out, errOut = runCLI(t, "status", "--addr", a.URL)
	if code != exitNoQuorum || !strings.Contains(out, "no quorum: member c3") || !strings.Contains(errOut, "no quorum") {
		t.Fatalf("status with no member seeing a quorum: exit %d (want %d)\n%s%s", code, exitNoQuorum, out, errOut)
	}
}
