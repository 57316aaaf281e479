// SPDX-License-Identifier: Apache-2.0

package lease_test

import (
	"slices"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/api"
)

// An acquire carries the oldest parked reports up to the API's bounds, and what waited ParkFor
// goes alone, oldest first; the rest stays parked in order.
func TestOutbox_CarriesTheOldestWithinBoundsAndGivesUpAfterParkFor(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var o lease.Outbox[string]
	o.Park(t0, "a", 1)
	o.Park(t0.Add(100*time.Millisecond), "b", api.MaxLeaseNodes)
	o.Park(t0.Add(200*time.Millisecond), "c", 1)
	if got := o.Take(); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("first acquire carries %v, want [a]: b would pass MaxLeaseNodes results", got)
	}
	if got := o.Due(t0.Add(100 * time.Millisecond)); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("due at b's park time: %v, want [b]", got)
	}
	if got := o.Take(); !slices.Equal(got, []string{"c"}) || o.Len() != 0 {
		t.Fatalf("second acquire carries %v (%d left), want [c]", got, o.Len())
	}
	for i := range api.MaxCarriedReports + 3 {
		o.Park(t0, string(rune('a'+i%26)), 1)
	}
	if got := o.Take(); len(got) != api.MaxCarriedReports || o.Len() != 3 {
		t.Fatalf("an acquire carried %d with %d left, want %d and 3", len(got), o.Len(), api.MaxCarriedReports)
	}
	if got := o.Due(time.Time{}); len(got) != 3 || o.Len() != 0 {
		t.Fatalf("stopping sends %d alone (%d left), want 3", len(got), o.Len())
	}
}
