// SPDX-License-Identifier: Apache-2.0

package lease_test

import (
	"errors"
	"testing"

	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/api"
)

// An acquire's answers settle the reports it carried only when they line up with them, by
// position and request id; a refusal is the error a lone report would have had.
func TestAnswers_MatchTheCarriedReportsByPositionAndRequestID(t *testing.T) {
	sent := []api.ReportRequest{{LeaseID: "l1", RequestID: "r1"}, {LeaseID: "l2", RequestID: "r2"}}
	got := []api.ReportAnswer{
		{RequestID: "r1", ReportResponse: api.ReportResponse{Applied: []string{"a"}}},
		{RequestID: "r2", Error: &api.ErrorBody{Code: api.CodeTokenMismatch, Error: "token 3 is not the lease's"}},
	}
	out := lease.Answers(sent, got)
	if !out[0].Answered || out[0].Err != nil || len(out[0].Response.Applied) != 1 {
		t.Fatalf("first answer %+v, want applied [a]", out[0])
	}
	if !out[1].Answered || !lease.Stale(out[1].Err) || !lease.Ends(out[1].Err) {
		t.Fatalf("second answer %+v, want a stale refusal that ends the report", out[1])
	}
	for _, bad := range [][]api.ReportAnswer{nil, got[:1], {got[1], got[0]}} {
		for i, d := range lease.Answers(sent, bad) {
			if d.Answered {
				t.Fatalf("answers %+v: report %d answered, want every one sent again alone", bad, i)
			}
		}
	}
	if lease.Ends(errors.New("leader lost")) {
		t.Fatal("a report that failed to arrive ends")
	}
}
