// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"fmt"
	"slices"
	"testing"

	"github.com/seed96588659/muster/pkg/api"
)

// A filter that matches few nodes must not read the whole ledger in one page: each page examines
// at most its scan bound, answers what it found (possibly nothing) and a next to resume from, and
// paging through still lists every match exactly once, in identity order.
func TestLedger_FilteredPagesExamineABoundedNumberOfNodes(t *testing.T) {
	// At protocol 2 a registration still moves a node that is not leased (regionProtocol).
	h := newHarnessAt(t, regionProtocol-1)
	var ids, want []string
	for i := range 50 {
		ids = append(ids, fmt.Sprintf("n%03d", i))
	}
	h.register(t0, "big", ids...)
	for _, i := range []int{3, 4, 17, 48} {
		h.register(t0, "rare", ids[i])
		want = append(want, ids[i])
	}
	f := NodeFilter{Region: "rare", Limit: 2, scan: 7}
	var got []string
	pages := 0
	for {
		page, next, err := h.l.Nodes(f)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(page) > f.Limit {
			t.Fatalf("page of %d nodes, limit %d", len(page), f.Limit)
		}
		for _, n := range page {
			got = append(got, n.Identity)
		}
		if next == "" {
			break
		}
		if next <= f.After {
			t.Fatalf("next %q does not move past %q", next, f.After)
		}
		f.After = next
	}
	if !slices.Equal(got, want) {
		t.Fatalf("listed %v, want %v", got, want)
	}
	// 50 records, at most 7 examined per page: at least 8 pages.
	if pages < 8 {
		t.Fatalf("%d pages: a page examined more than its bound", pages)
	}
	// Without a filter nothing is skipped, so a page is full unless it is the last.
	page, next, err := h.l.Nodes(NodeFilter{Limit: 20, scan: 7})
	if err != nil || len(page) != 20 || next != page[19].Identity {
		t.Fatalf("unfiltered page: %d nodes, next %q, %v", len(page), next, err)
	}
}

func TestLedger_LeaseCountCountsOutstandingLeases(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a", "b", "c")
	count := func() int {
		t.Helper()
		n, err := h.l.LeaseCount()
		if err != nil {
			t.Fatal(err)
		}
		if ls, _ := h.l.Leases(); len(ls) != n {
			t.Fatalf("LeaseCount %d, Leases lists %d", n, len(ls))
		}
		return n
	}
	if n := count(); n != 0 {
		t.Fatalf("%d leases before any grant", n)
	}
	first := h.grant(t0, "edge", "eu", 2)
	h.grant(t0, "edge", "eu", 1)
	if n := count(); n != 2 {
		t.Fatalf("%d leases after two grants", n)
	}
	h.report(t0, first, api.OutcomeProvisioned, first.Nodes...)
	if n := count(); n != 1 {
		t.Fatalf("%d leases after one was reported", n)
	}
}
