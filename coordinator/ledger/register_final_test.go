// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"slices"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// A registration names the nodes it leaves final (an edge sends those again at its next sighting)
// and leaves out those it leaves waiting or leased, new, requeued or unchanged (an edge may leave
// those out of its next registrations until a result).
func TestRegister_NamesTheNodesItLeavesFinal(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "p", "d", "s", "leased", "waiting")
	ls := h.grant(t0, "e", "eu", 3)
	h.apply(&Report{Now: t0, LeaseID: ls.ID, Token: ls.Token, Policy: testPolicy(), Results: []Result{
		{Identity: ls.Nodes[0], Outcome: api.OutcomeProvisioned},
		{Identity: ls.Nodes[1], Outcome: api.OutcomeDeferred},
		{Identity: ls.Nodes[2], Outcome: api.OutcomeShutdown},
	}})
	h.grant(t0, "e", "eu", 1)

	all := []string{"p", "d", "s", "leased", "waiting", "new"}
	r := h.register(t0.Add(time.Second/2), "eu", all...)
	var final []string
	for _, id := range all {
		if st := h.node(id).State; st != api.StateWaiting && st != api.StateLeased {
			final = append(final, id)
		}
	}
	if len(final) != 3 {
		t.Fatalf("set-up: %v final after the sighting, want the three reported ones", final)
	}
	slices.Sort(r.Final)
	slices.Sort(final)
	if !slices.Equal(r.Final, final) {
		t.Fatalf("a sighting within reprovision_after: final %v, want %v", r.Final, final)
	}
	r = h.register(t0.Add(time.Hour), "eu", all...)
	if len(r.Final) != 0 || r.Requeued != 3 {
		t.Fatalf("a sighting after reprovision_after requeues all three: %+v", r)
	}
}
