// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"slices"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// TestLedger_ReportRetryGetsTheSameAnswerUntilForgotten: a report with a request id applied once
// answers its retries with the first outcomes (also after its lease finished) and changes
// nothing; after keep has passed, a later report forgets it, and only then is a retry new.
func TestLedger_ReportRetryGetsTheSameAnswerUntilForgotten(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a", "b")
	ls := h.grant(t0, "e", "eu", 2)
	rep := &Report{Now: t0, LeaseID: ls.ID, Token: ls.Token, Policy: testPolicy(), Edge: "e", Region: "eu", RequestID: "r1", Keep: time.Minute,
		Results: []Result{{Identity: "a", Outcome: api.OutcomeProvisioned}, {Identity: "b", Outcome: api.OutcomeFailed, Error: "x"}}}
	first := mustResult[*ReportResult](t, h.apply(rep))
	if !first.LeaseDone || len(first.Applied) != 2 {
		t.Fatalf("first report: %+v", first)
	}
	again := mustResult[*ReportResult](t, h.apply(rep))
	if !again.Replayed || !slices.Equal(again.Applied, first.Applied) || !again.LeaseDone {
		t.Fatalf("retry answered %+v, want the first answer %+v", again, first)
	}
	if n := h.node("b"); n.Attempts != 1 {
		t.Fatalf("node b attempts %d after a retried report, want 1", n.Attempts)
	}
	wrong := *rep
	wrong.Edge = "f"
	mustErr(t, h.apply(&wrong), ErrWrongEdge)

	// Another lease's report after keep forgets r1.
	h.register(t0, "eu", "c")
	other := h.grant(t0.Add(2*time.Minute), "e", "eu", 1)
	mustResult[*ReportResult](t, h.apply(&Report{Now: t0.Add(2 * time.Minute), LeaseID: other.ID, Token: other.Token, Policy: testPolicy(), RequestID: "r2", Keep: time.Minute,
		Results: []Result{{Identity: "c", Outcome: api.OutcomeProvisioned}}}))
	late := *rep
	late.Now = t0.Add(2 * time.Minute)
	mustErr(t, h.apply(&late), ErrUnknownLease)
}
