// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"slices"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

func eventTrail(es []api.Event) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Identity+":"+string(e.From)+">"+string(e.To))
	}
	return out
}

// TestEvents_EveryTransitionAndOperatorActionInApplyOrder: the event log holds each node
// transition and operator action under the log index of its command, a reader resumes after any
// event id or after a whole index, and two ledgers fed the same log hold the same events.
func TestEvents_EveryTransitionAndOperatorActionInApplyOrder(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a", "b")
	ls := h.grant(t0, "edge-a", "eu", 2)
	h.report(t0.Add(time.Second), ls, api.OutcomeProvisioned, "a")
	h.operator(t0.Add(testPolicy().LockWindow+2*time.Second), VerbForget, "", "a") // after its lock window
	all, oldest, err := h.l.Events(api.EventPosition{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a:>waiting", "b:>waiting", "a:waiting>leased", "b:waiting>leased", "a:leased>provisioned", "a:provisioned>"}
	if got := eventTrail(all); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if all[5].Kind != api.EventForgotten || all[0].Index >= all[2].Index || all[2].Index != all[3].Index || all[3].Pos != 1 || oldest.Index != all[0].Index {
		t.Fatalf("events %+v, oldest %+v", all, oldest)
	}
	after, _, _ := h.l.Events(api.EventPosition{Index: all[2].Index, Pos: all[2].Pos}, 100)
	if got := eventTrail(after); !slices.Equal(got, want[3:]) {
		t.Fatalf("after event %s: %v", all[2].EventID(), got)
	}
	after, _, _ = h.l.Events(api.EventPosition{Index: all[2].Index, Whole: true}, 100)
	if got := eventTrail(after); !slices.Equal(got, want[4:]) {
		t.Fatalf("after index %d: %v", all[2].Index, got)
	}
}

// TestEvents_NoneBelowTheirProtocol: members of the build before events record none, so every
// member's log holds the same events until the cluster runs protocol 3.
func TestEvents_NoneBelowTheirProtocol(t *testing.T) {
	h := newHarnessAt(t, eventsProtocol-1)
	h.register(t0, "eu", "a")
	if es, _, err := h.l.Events(api.EventPosition{}, 10); err != nil || len(es) != 0 {
		t.Fatalf("events at protocol %d: %v %v", eventsProtocol-1, es, err)
	}
}
