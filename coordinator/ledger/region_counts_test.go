// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"maps"
	"testing"

	"github.com/seed96588659/muster/pkg/api"
)

// One region's counts are that region's entries of Counts, and a region whose name starts
// another's ("eu" and "eu2") does not borrow its neighbour's counts.
func TestLedger_RegionCountsReadOneRegion(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "e1", "e2", "e3", "e4", "e5")
	h.register(t0, "eu2", "f1", "f2", "f3")
	ls := h.grant(t0, "edge-a", "eu", 2)
	mustResult[*ReportResult](t, h.report(t0, ls, api.OutcomeProvisioned, ls.Nodes[0]))

	got, err := h.l.RegionCounts("eu")
	if err != nil {
		t.Fatal(err)
	}
	if got[api.StateWaiting] != 3 || got[api.StateLeased] != 1 || got[api.StateProvisioned] != 1 {
		t.Errorf("eu counts %v, want 3 waiting, 1 leased, 1 provisioned", got)
	}
	if all := h.counts(); !maps.Equal(got, all["eu"]) {
		t.Errorf("RegionCounts(eu) = %v, Counts()[eu] = %v", got, all["eu"])
	}
	other, err := h.l.RegionCounts("eu2")
	if err != nil || other[api.StateWaiting] != 3 || other[api.StateLeased] != 0 {
		t.Errorf("eu2 counts %v, %v", other, err)
	}
	none, err := h.l.RegionCounts("e")
	if err != nil || len(none) != 0 {
		t.Errorf("counts of a region with no nodes: %v, %v", none, err)
	}
}
