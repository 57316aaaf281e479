// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"bytes"
	"strings"
	"testing"

	"github.com/seed96588659/muster/pkg/api"
)

// TestSummary_RegionTableCountsEachLedgerState: every ledger state the table shows sits under
// its own heading, gone included.
func TestSummary_RegionTableCountsEachLedgerState(t *testing.T) {
	s := Summary{Done: true, Nodes: 28, Regions: []RegionSummary{{Name: "eu", Nodes: 28, Succeed: 20, Ledger: map[api.NodeState]int{
		api.StateProvisioned: 19, api.StateDeferred: 2, api.StateShutdown: 3, api.StateAbandoned: 1, api.StateGone: 4, api.StateWaiting: 5, api.StateLeased: 6,
	}}}}
	var b bytes.Buffer
	s.Print(&b)
	// Headings of two words become one field each.
	joined := strings.NewReplacer("TO PROVISION", "TO_PROVISION", "SHUT DOWN", "SHUT_DOWN", "EDGE DISCOVERED", "EDGE_DISCOVERED", "EDGE FAILED", "EDGE_FAILED")
	var head, row []string
	for line := range strings.Lines(b.String()) {
		if f := strings.Fields(joined.Replace(line)); len(f) > 0 && f[0] == "REGION" {
			head = f
		} else if head != nil && row == nil {
			row = f
		}
	}
	if len(head) == 0 || len(row) != len(head) {
		t.Fatalf("no region table with one row per heading:\n%s", b.String())
	}
	want := map[string]string{"PROVISIONED": "19", "DEFERRED": "2", "SHUT_DOWN": "3", "ABANDONED": "1", "GONE": "4", "WAITING": "5", "LEASED": "6"}
	got := map[string]string{}
	for i, h := range head {
		got[h] = row[i]
	}
	for h, v := range want {
		if got[h] != v {
			t.Errorf("column %s = %q, want %s:\n%s", h, got[h], v, b.String())
		}
	}
}
