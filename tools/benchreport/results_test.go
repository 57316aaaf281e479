// SPDX-License-Identifier: Apache-2.0

package benchreport

import (
	"os"
	"strings"
	"testing"
)

func TestParse_RecordedRuns(t *testing.T) {
	for _, tc := range []struct {
		file  string
		bench string
		unit  string
		want  float64
	}{
		{"choria-provisioner.txt", "BenchmarkChoriaProvisioner/exec/100", "provisioned", 100},
		{"edge-exec.txt", "BenchmarkEdge/exec/100", "provisioned", 100},
		{"edge-persistent.txt", "BenchmarkEdge/persistent/100", "double-provisioned", 0},
		{"cluster.txt", "BenchmarkClusterEdge/cluster", "ns/op", -1},
		{"failover.txt", "BenchmarkFailover_SIGKILLToNextGrantedLease", "failover-max-s", -1},
		{"ledger.txt", "BenchmarkLedgerScale/10k/snapshot", "snapshot-MB", -1},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f, err := os.Open("testdata/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			res, err := Parse(f)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := res[tc.bench][tc.unit]
			if !ok {
				t.Fatalf("no %s of %s in %v", tc.unit, tc.bench, res)
			}
			// -1: a measured figure, which must merely be there and positive.
			if tc.want == -1 && got <= 0 || tc.want != -1 && got != tc.want {
				t.Errorf("%s of %s = %v, want %v", tc.unit, tc.bench, got, tc.want)
			}
		})
	}
}

func TestParse_MeanOfRepeatedLines(t *testing.T) {
	in := "BenchmarkX/a-2 \t 1\t 10.0 nodes/min\t 4 rss-MB\n" +
		"BenchmarkX/a-2 \t 1\t 30.0 nodes/min\n"
	res, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if got := res["BenchmarkX/a"]; got["nodes/min"] != 20 || got["rss-MB"] != 4 {
		t.Errorf("figures %v, want nodes/min 20 (the mean of both lines) and rss-MB 4 (its only line)", got)
	}
}

// A benchmark's own output written while it runs lands after the name testing printed first, and
// breaks that result line: the others must survive.
func TestParse_BrokenLineCostsOnlyItsResult(t *testing.T) {
	in := "goos: linux\n" +
		"BenchmarkA-2 \ttime=\"2026-12-02\" level=warning msg=\"a log line\"\n" +
		"       1\t 5 nodes/min\n" +
		"BenchmarkB-2 \t       1\t 7 nodes/min\n" +
		"PASS\nok  \tgithub.com/x\t3.1s\n"
	res, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if got := res["BenchmarkB"]["nodes/min"]; got != 7 {
		t.Errorf("BenchmarkB nodes/min = %v, want 7; all: %v", got, res)
	}
	if _, ok := res["BenchmarkA"]; ok {
		t.Errorf("BenchmarkA's broken line gave figures: %v", res["BenchmarkA"])
	}
}
