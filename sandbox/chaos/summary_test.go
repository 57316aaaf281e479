// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"
)

// A leader SIGKILL beside an edge fault stalls the fleet for the edge's leases too: the summary's
// failover figure counts only rounds where nothing else held provisioning back.
func TestSummary_LoneStallsLeaveOutRoundsWithEdgeFaults(t *testing.T) {
	s := Summary{Rounds: []*RoundResult{
		{Round: 1, Kinds: []Kind{LeaderKill}, Stalls: []time.Duration{900 * time.Millisecond}},
		{Round: 2, Kinds: []Kind{LeaderKill, ClockStep}, Stalls: []time.Duration{1100 * time.Millisecond}},
		{Round: 3, Kinds: []Kind{LeaderKill, EdgeStop}, Stalls: []time.Duration{8800 * time.Millisecond}},
	}}
	if got := s.LoneStalls(); !slices.Equal(got, []time.Duration{900 * time.Millisecond, 1100 * time.Millisecond}) {
		t.Fatalf("lone stalls %v", got)
	}
	var b bytes.Buffer
	s.Print(&b)
	out := b.String()
	if !strings.Contains(out, "median 1s, max 1.1s\t") && !strings.Contains(out, "median 1s, max 1.1s ") {
		t.Errorf("summary lacks the lone figures:\n%s", out)
	}
	if !strings.Contains(out, "with other faults beside it") || !strings.Contains(out, "max 8.8s") {
		t.Errorf("summary lacks the mixed figures:\n%s", out)
	}
}
