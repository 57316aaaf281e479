// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestReadRefusals_ParsesTheEdgesLogLine(t *testing.T) {
	log := `time=2026-12-01T09:12:34.879Z level=WARN msg="results refused by the lease source: the lease is no longer this edge's" lease=r-19bad06 token=306 results=1 nodes=[emu-eu-00267] error="report 1 results: 404 unknown_lease"
time=2026-12-01T09:12:34.880Z level=INFO msg=provisioned node=emu-eu-00001 took=1ms
time=2026-12-01T09:12:34.990Z level=WARN msg="results refused by the lease source: the lease is no longer this edge's" lease=r-fde4 token=283 results=2 nodes="[emu-eu-00187 emu-eu-00228]" error="x"
`
	p := filepath.Join(t.TempDir(), "edge.log")
	if err := os.WriteFile(p, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	got := readRefusals("e", p)
	if len(got) != 2 {
		t.Fatalf("%d refusals, want 2: %+v", len(got), got)
	}
	if got[0].Lease != "r-19bad06" || got[0].Token != "306" || !slices.Equal(got[0].Nodes, []string{"emu-eu-00267"}) || got[0].Time.IsZero() {
		t.Errorf("first refusal %+v", got[0])
	}
	if !slices.Equal(got[1].Nodes, []string{"emu-eu-00187", "emu-eu-00228"}) {
		t.Errorf("second refusal nodes %v", got[1].Nodes)
	}
}
