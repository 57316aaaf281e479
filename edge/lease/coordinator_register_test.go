// SPDX-License-Identifier: Apache-2.0

package lease_test

import (
	"context"
	"slices"
	"testing"

	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/api"
)

// The source leaves out of its next registrations the nodes the coordinator answered as waiting
// or leased, and sends again those it answered final and those it reported a result for.
func TestCoordinator_RegistersAgainOnlyWhatASightingMayChange(t *testing.T) {
	f, src, _ := newFakeSource(t)
	ctx := context.Background()
	f.register.Store(`{"added":3,"final":["done"],"lists_final":true}`)
	f.report.Store(`{"applied":["n1"]}`)
	sweep := []lease.Found{{Identity: "n1"}, {Identity: "n2"}, {Identity: "done"}}
	for range 2 {
		if _, err := src.Register(ctx, sweep); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := src.Report(ctx, api.Lease{ID: "l-1", Token: 4, Edge: "edge-eu-1", Region: "eu"}, []api.NodeResult{{Identity: "n1", Outcome: api.OutcomeFailed}}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Register(ctx, sweep); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	got := f.registered
	f.mu.Unlock()
	want := [][]string{{"n1", "n2", "done"}, {"done"}, {"n1", "done"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("registrations sent %v, want %v", got, want)
	}
}
