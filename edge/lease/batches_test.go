// SPDX-License-Identifier: Apache-2.0

package lease_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/api"
)

func heldOn(id string, nodes ...string) *lease.Held {
	return lease.NewHeld(api.Lease{ID: id, Token: 1, TTL: api.Duration(30 * time.Second), Nodes: nodes}, time.Unix(1000, 0), 0, time.Second)
}

// A lease's results wait for its last one and go together, to be parked for an acquire; a
// lease listing no nodes (a replayed intent's) never completes and goes alone, by age.
func TestBatches_ALeaseGoesAtItsLastResult(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var b lease.Batches[string]
	l1, l0 := heldOn("l1", "a", "b"), heldOn("l0")
	if due := b.Add(t0, l1, "a"); len(due) != 0 {
		t.Fatalf("first of two results made %v due", due)
	}
	if due := b.Add(t0, l0, "z"); len(due) != 0 {
		t.Fatalf("a replayed intent's result made %v due", due)
	}
	due := b.Add(t0, l1, "b")
	if len(due) != 1 || due[0].Held != l1 || !slices.Equal(due[0].Results, []string{"a", "b"}) || due[0].Alone {
		t.Fatalf("last result made %+v due, want l1's a and b, not alone", due)
	}
	if b.Len() != 1 {
		t.Fatalf("%d results wait, want the replayed one", b.Len())
	}
	if due := b.Due(t0.Add(lease.BatchFor)); len(due) != 0 {
		t.Fatalf("due at exactly BatchFor: %+v, want none (it goes once it waited longer)", due)
	}
	due = b.Due(t0.Add(lease.BatchFor + time.Nanosecond))
	if len(due) != 1 || due[0].Held != l0 || !due[0].Alone {
		t.Fatalf("due after BatchFor: %+v, want l0's result alone", due)
	}
}

// A lease whose hosts span more than BatchFor is reported in parts, oldest lease first, and the
// part after the first still completes at the lease's last result.
func TestBatches_APartOlderThanBatchForIsDue(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var b lease.Batches[string]
	l1, l2 := heldOn("l1", "a", "b", "c"), heldOn("l2", "x", "y")
	b.Add(t0, l1, "a")
	b.Add(t0.Add(time.Millisecond), l2, "x")
	due := b.Due(t0.Add(lease.BatchFor + 2*time.Millisecond))
	if len(due) != 2 || due[0].Held != l1 || due[1].Held != l2 || due[0].Alone || due[1].Alone {
		t.Fatalf("due %+v, want l1 then l2, to be parked", due)
	}
	b.Add(t0.Add(2*time.Second), l1, "b")
	if due := b.Add(t0.Add(2*time.Second), l1, "c"); len(due) != 1 || !slices.Equal(due[0].Results, []string{"b", "c"}) {
		t.Fatalf("l1's last result made %+v due, want b and c", due)
	}
}

// Once BatchMax results wait, every lease's go alone; a withheld result counts towards its
// lease's last without being reported.
func TestBatches_BatchMaxSendsEveryLeaseAloneAndWithheldResultsCount(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var b lease.Batches[string]
	w := heldOn("w", "a", "b")
	b.Add(t0, w, "a")
	if due := b.Withhold(w); len(due) != 1 || !slices.Equal(due[0].Results, []string{"a"}) {
		t.Fatalf("withholding w's last made %+v due, want its result a", due)
	}
	if due := b.Withhold(heldOn("v", "c")); len(due) != 0 {
		t.Fatalf("withholding a lease's only result made %+v due, want nothing to report", due)
	}
	var helds []*lease.Held
	for i := range lease.BatchMax / 2 {
		helds = append(helds, heldOn(fmt.Sprint(i), "n1", "n2", "n3"))
	}
	var due []lease.Batch[string]
	for i := 0; len(due) == 0; i++ {
		due = b.Add(t0, helds[i%len(helds)], fmt.Sprint(i))
	}
	if len(due) != len(helds) || b.Len() != 0 {
		t.Fatalf("at BatchMax %d batches due (%d left), want every lease's (%d)", len(due), b.Len(), len(helds))
	}
	for i, d := range due {
		if d.Held != helds[i] || !d.Alone || len(d.Results) != 2 {
			t.Fatalf("batch %d is %+v, want lease %s's two results alone", i, d, helds[i].Lease().ID)
		}
	}
	b.Add(t0, heldOn("u", "x", "y"), "x")
	if all := b.All(); len(all) != 1 || !all[0].Alone || !slices.Equal(all[0].Results, []string{"x"}) {
		t.Fatalf("All %+v, want lease u's first result alone", all)
	}
}

// A lease is renewed while it is valid and some of its results are not settled: at a third of
// its TTL, or a tenth (at least 100 ms) after a renewal that failed.
func TestHeld_RenewedUntilNoResultIsLeft(t *testing.T) {
	now := time.Unix(1000, 0)
	h := heldOn("l", "a", "b")
	if !h.Renews(now) {
		t.Fatal("a fresh lease with two results owed is not renewed")
	}
	if next, retry := h.RenewPace(); next != 10*time.Second || retry != 3*time.Second {
		t.Fatalf("pace %s, %s; want 10s and 3s for a 30 s TTL", next, retry)
	}
	if h.Settled(1) || !h.Renews(now) {
		t.Fatal("one of two results settled: none left, or no more renewals")
	}
	if !h.Settled(1) || h.Renews(now) {
		t.Fatal("every result settled, and the lease is still renewed")
	}
	if h.Settled(1) != true {
		t.Fatal("settling past zero says results are left")
	}
	if l := heldOn("l2", "a"); l.Renews(now.Add(time.Minute)) {
		t.Fatal("a lease past its deadline is renewed")
	}
	if l := lease.NewHeld(api.Lease{ID: "local", Nodes: []string{"a"}}, now, 0, time.Second); l.Renews(now) {
		t.Fatal("a lease that never expires is renewed")
	}
	if _, retry := lease.NewHeld(api.Lease{ID: "s", TTL: api.Duration(time.Second), Nodes: []string{"a"}}, now, 0, 0).RenewPace(); retry != 100*time.Millisecond {
		t.Fatalf("retry of a 1 s lease after %s, want 100ms", retry)
	}
}
