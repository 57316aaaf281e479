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

// The pause flag's epoch orders answers across a recover (api.PauseMark): none below the
// protocol that records holds, 1 before any hold, then the stamp of the hold the first leader
// after a recover writes, in the applied pause and the read flag alike; a later recover's hold
// moves it on.
func TestLedger_PauseEpochIsTheLastRecoverHold(t *testing.T) {
	old := openHarness(t, Options{})
	if p, err := old.l.Pause(); err != nil || p.Epoch != 0 {
		t.Fatalf("epoch below protocol %d = %+v, %v; want none (0)", HoldProtocol, p, err)
	}
	h := newHarness(t)
	if p, err := h.l.Pause(); err != nil || p.Epoch != 1 {
		t.Fatalf("epoch before any recover = %+v, %v; want 1", p, err)
	}
	first := t0.Add(time.Minute)
	mustResult[*HoldState](t, h.apply(&Hold{Now: first, Until: first.Add(time.Minute), Reason: "recover"}))
	if p, err := h.l.Pause(); err != nil || p.Epoch != uint64(first.UnixNano()) {
		t.Fatalf("epoch after the recover's hold = %+v, %v; want %d", p, err, first.UnixNano())
	}
	applied := mustResult[*PauseState](t, h.apply(&Pause{Now: first.Add(time.Second), Paused: true, By: "ops"}))
	if applied.Epoch != uint64(first.UnixNano()) {
		t.Errorf("applied pause in epoch %d, want %d", applied.Epoch, first.UnixNano())
	}
	second := first.Add(time.Hour)
	mustResult[*HoldState](t, h.apply(&Hold{Now: second, Until: second.Add(time.Minute), Reason: "recover"}))
	if p, err := h.l.Pause(); err != nil || !p.Paused || p.Epoch != uint64(second.UnixNano()) {
		t.Fatalf("epoch after a second recover = %+v, %v; want paused in %d", p, err, second.UnixNano())
	}
}
