// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"maps"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestHeldIndex_OldestHoldOfEachRegionFollowsTheQueue: the age the held-too-long alert reads is
// each region's oldest hold, and it follows holds, approvals, bans, unbans and forgets; a ledger
// that never held a node has no index at all (its file and digest are the build before's).
func TestHeldIndex_OldestHoldOfEachRegionFollowsTheQueue(t *testing.T) {
	h := newHarness(t)
	oldest := func() map[string]time.Time {
		t.Helper()
		o, err := h.l.OldestHolds()
		if err != nil {
			t.Fatalf("OldestHolds: %v", err)
		}
		return o
	}
	want := func(what string, w map[string]time.Time) {
		t.Helper()
		if got := oldest(); !maps.EqualFunc(got, w, time.Time.Equal) {
			t.Fatalf("%s: oldest holds %v, want %v", what, got, w)
		}
	}
	h.registerWith(t0, nil, "eu", "w")
	want("nothing held", map[string]time.Time{})
	if err := h.l.view(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketHeld) != nil {
			t.Errorf("a ledger that never held a node has the held index")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	manual := &Approval{Manual: []string{AnyRegion}}
	h.registerWith(t0, manual, "eu", "a")
	h.registerWith(t0.Add(time.Minute), manual, "eu", "b")
	h.registerWith(t0.Add(2*time.Minute), manual, "us", "c")
	want("three held", map[string]time.Time{"eu": t0, "us": t0.Add(2 * time.Minute)})

	h.operator(t0.Add(3*time.Minute), VerbApprove, "", "a")
	want("a approved", map[string]time.Time{"eu": t0.Add(time.Minute), "us": t0.Add(2 * time.Minute)})

	h.operator(t0.Add(3*time.Minute), VerbBan, "", "b")
	want("b banned", map[string]time.Time{"us": t0.Add(2 * time.Minute)})
	h.operator(t0.Add(4*time.Minute), VerbUnban, "", "b")
	if got := oldest()["eu"]; got.IsZero() {
		t.Fatalf("b unbanned to held is not in the index: %v", oldest())
	}

	h.operator(t0.Add(5*time.Minute), VerbForget, "", "c")
	if _, ok := oldest()["us"]; ok {
		t.Fatalf("c forgotten is still in the index: %v", oldest())
	}
}
