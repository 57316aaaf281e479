// SPDX-License-Identifier: Apache-2.0

package register_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge/register"
	"github.com/seed96588659/muster/pkg/api"
)

func sighted(ids ...string) []register.Found {
	out := make([]register.Found, len(ids))
	for i, id := range ids {
		out[i] = register.Found{Identity: id}
	}
	return out
}

func names(found []register.Found) []string {
	out := make([]string, len(found))
	for i, f := range found {
		out[i] = f.Identity
	}
	return out
}

// filter runs one registration through q and answers it with resp; it returns what was sent.
func filter(q *register.Queued, now time.Time, found []register.Found, resp *api.RegisterResponse) []string {
	send, answered := q.Filter(now, found)
	answered(resp)
	return names(send)
}

func TestQueued_LeavesOutNodesAnsweredAsWaitingUntilAResultOrResend(t *testing.T) {
	t0 := time.Unix(1000, 0)
	q := register.NewQueued(10 * time.Minute)
	queued := &api.RegisterResponse{ListsFinal: true, Final: []string{"done"}, Rejected: []api.RejectedResult{{Identity: "elsewhere"}}}
	if got := filter(q, t0, sighted("a", "b", "done", "elsewhere"), queued); !slices.Equal(got, []string{"a", "b", "done", "elsewhere"}) {
		t.Fatalf("first sweep sent %v, want every node", got)
	}
	// Answered final or rejected: a later sighting may matter, so they go again.
	if got := filter(q, t0.Add(time.Minute), sighted("a", "b", "done", "elsewhere"), queued); !slices.Equal(got, []string{"done", "elsewhere"}) {
		t.Fatalf("second sweep sent %v, want only the final and the rejected node", got)
	}
	// A result for a makes its next sighting count; a startup event always counts.
	q.Forget("a")
	boot := register.Found{Identity: "b", Event: true}
	if got := filter(q, t0.Add(2*time.Minute), append(sighted("a"), boot), queued); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("after a's result and b's boot sent %v, want both", got)
	}
	// Resend after the last answer sends them again (another edge may have finished them).
	if got := filter(q, t0.Add(2*time.Minute+10*time.Minute), sighted("a", "b"), queued); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("Resend after their answer sent %v, want both", got)
	}
}

func TestQueued_SendsAgainWhatNoAnswerVouchedFor(t *testing.T) {
	t0 := time.Unix(1000, 0)
	q := register.NewQueued(time.Hour)
	// The call failed: nothing is known.
	filter(q, t0, sighted("a"), nil)
	if got := filter(q, t0.Add(time.Second), sighted("a"), &api.RegisterResponse{}); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("after a failed call sent %v, want a again", got)
	}
	// An older coordinator does not say which nodes are final.
	if got := filter(q, t0.Add(2*time.Second), sighted("a"), &api.RegisterResponse{ListsFinal: true}); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("after an answer without ListsFinal sent %v, want a again", got)
	}
	if got := filter(q, t0.Add(3*time.Second), sighted("a"), &api.RegisterResponse{ListsFinal: true}); len(got) != 0 {
		t.Fatalf("after a queued answer sent %v, want nothing", got)
	}
}

// A result reported while the registration that named the node is in flight wins: the answer,
// which may predate the result in the ledger, does not make the edge leave the node out.
func TestQueued_AResultDuringTheRegistrationIsNotOverwrittenByItsAnswer(t *testing.T) {
	t0 := time.Unix(1000, 0)
	q := register.NewQueued(time.Hour)
	_, answered := q.Filter(t0, sighted("a"))
	q.Forget("a")
	answered(&api.RegisterResponse{ListsFinal: true})
	if got := filter(q, t0.Add(time.Second), sighted("a"), nil); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("sent %v, want a: its result came after the registration was sent", got)
	}
}

// Nodes never sighted again (provisioned by another edge) are dropped once Resend passed, so the
// memory follows the nodes still sighted, not every node ever seen.
func TestQueued_DropsExpiredAnswersAsItGrows(t *testing.T) {
	t0 := time.Unix(1000, 0)
	q := register.NewQueued(time.Minute)
	queued := &api.RegisterResponse{ListsFinal: true}
	var old []string
	for i := range 2000 {
		old = append(old, fmt.Sprintf("old-%d", i))
	}
	filter(q, t0, sighted(old...), queued)
	if q.Len() != 2000 {
		t.Fatalf("remembers %d, want 2000", q.Len())
	}
	filter(q, t0.Add(2*time.Minute), sighted("new"), queued)
	if q.Len() != 1 {
		t.Fatalf("after Resend remembers %d, want only the new node", q.Len())
	}
}

// A node whose report was given up is sent at every sighting until Resend has passed: the report
// may still be applied (a late message), after an answer of waiting the edge would otherwise
// believe for Resend (the simulator's stuck check, seed 427). A result reported since does not
// end that: the given-up report may still land after it.
func TestQueued_ANodeWhoseReportWasGivenUpIsSentAtEverySightingUntilResend(t *testing.T) {
	t0 := time.Unix(1000, 0)
	q := register.NewQueued(10 * time.Minute)
	queued := &api.RegisterResponse{ListsFinal: true}
	filter(q, t0, sighted("a", "b"), queued)
	q.Unsure(t0.Add(time.Second), "a")
	for i, at := range []time.Duration{time.Minute, 2 * time.Minute, 5 * time.Minute} {
		if i == 1 {
			q.Forget("a")
		}
		if got := filter(q, t0.Add(at), sighted("a", "b"), queued); !slices.Equal(got, []string{"a"}) {
			t.Fatalf("sweep at +%s sent %v, want a (its report was given up) and not b", at, got)
		}
	}
	// Resend after it was given up, a is remembered like any other.
	filter(q, t0.Add(11*time.Minute), sighted("a"), queued)
	if got := filter(q, t0.Add(12*time.Minute), sighted("a"), queued); len(got) != 0 {
		t.Fatalf("sweep after Resend sent %v, want a left out again", got)
	}
}
