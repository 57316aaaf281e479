// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"bytes"
	"strings"
	"testing"
	"time"

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

// TestSummary_ClosingLineSaysHowLongTheHealthyNodesTookAndTheSteadyRate: besides the totals over
// the whole run, the line that closes the progress names the healthy nodes' time and their steady
// rate, and which percentiles it spans.
func TestSummary_ClosingLineSaysHowLongTheHealthyNodesTookAndTheSteadyRate(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	var done []time.Time
	for i := range 100 {
		done = append(done, start.Add(time.Second+time.Duration(i)*10*time.Millisecond))
	}
	s := Summary{Done: true, Elapsed: 50 * time.Second, Nodes: 110, Planned: map[Expect]int{Healthy: 100},
		Healthy: paceOf(start, done)}
	s.Report.Totals.Provisioned = 104
	var b bytes.Buffer
	s.Print(&b)
	text := b.String()
	for _, want := range []string{
		"== done after 50s: 110 nodes, 104 provisioned, 125 nodes/min over the whole run",
		"healthy nodes: 100 of 100 provisioned, the last 1.99s after the edges started",
		"steady rate 6000 nodes/min",
		"5th to the 95th percentile of their completion times: 90 nodes in 900ms",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
}

// TestSummary_ClosingLineWithoutASteadyRate: too few healthy nodes for a span say so rather
// than print a rate of nothing.
func TestSummary_ClosingLineWithoutASteadyRate(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	s := Summary{Elapsed: time.Minute, Nodes: 12, Planned: map[Expect]int{Healthy: 2},
		Healthy: paceOf(start, []time.Time{start.Add(1500 * time.Millisecond)})}
	var b bytes.Buffer
	s.Print(&b)
	for _, want := range []string{"== NOT done after 1m0s", "healthy nodes: 1 of 2 provisioned, the last 1.5s after the edges started", "no steady rate"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}

// TestSummary_DoneSaysWhatIsStillPending: a run is done when every node reached its planned
// end, but a failed node goes on being retried until the coordinator abandons it: the summary
// does not read as if nothing were left; it says which nodes are still waiting or leased.
func TestSummary_DoneSaysWhatIsStillPending(t *testing.T) {
	s := Summary{Done: true, Elapsed: time.Minute, Nodes: 44, Regions: []RegionSummary{
		{Name: "eu", Nodes: 22, Ledger: map[api.NodeState]int{api.StateProvisioned: 17, api.StateWaiting: 1}},
		{Name: "us", Nodes: 22, Ledger: map[api.NodeState]int{api.StateProvisioned: 17, api.StateWaiting: 1, api.StateLeased: 1}},
	}}
	var b bytes.Buffer
	s.Print(&b)
	text := b.String()
	first := strings.TrimSpace(strings.SplitN(strings.TrimLeft(text, "\n"), "\n", 2)[0])
	if !strings.Contains(first, "3 nodes still pending") {
		t.Errorf("the closing line %q does not say 3 nodes are still pending", first)
	}
	for _, want := range []string{"eu: 1 waiting", "us: 1 waiting, 1 leased"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
}
