// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"testing"
	"time"
)

// The pause flag says the log index it holds at, which edges order answers by: the command's own
// index when applied, the applied index when read.
func TestLedger_PauseSaysTheIndexItHoldsAt(t *testing.T) {
	h := newHarness(t)
	before, err := h.l.Pause()
	if err != nil || before.Paused || before.AsOf != h.index {
		t.Fatalf("pause before any = %+v, %v; want not paused as of %d", before, err, h.index)
	}
	applied := mustResult[*PauseState](t, h.apply(&Pause{Now: t0, Paused: true, By: "ops"}))
	if applied.AsOf != h.index {
		t.Errorf("applied pause as of %d, want its own index %d", applied.AsOf, h.index)
	}
	pausedAt := h.index
	h.register(t0.Add(time.Second), "eu", "a")
	read, err := h.l.Pause()
	if err != nil || !read.Paused || read.AsOf != h.index || read.AsOf <= pausedAt {
		t.Fatalf("pause read = %+v, %v; want paused as of %d", read, err, h.index)
	}
}
