// SPDX-License-Identifier: Apache-2.0

package benchreport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// recorded answers each invocation of the quick plan with a run recorded in testdata, by its
// -bench pattern, and counts the patterns it was asked for.
type recorded struct {
	t     *testing.T
	files map[string]string
	asked map[string]int
	fail  map[string]error
}

func newRecorded(t *testing.T) *recorded {
	return &recorded{t: t, asked: map[string]int{}, fail: map[string]error{}, files: map[string]string{
		"^BenchmarkChoriaProvisioner$":                  "choria-provisioner.txt",
		"^BenchmarkEdge$/^exec$":                        "edge-exec.txt",
		"^BenchmarkEdge$/^persistent$":                  "edge-persistent.txt",
		"^BenchmarkClusterEdge$":                        "cluster.txt",
		"^BenchmarkFarEdge$":                            "far-edge.txt",
		"^BenchmarkTenRegions$":                         "regions.txt",
		"^BenchmarkFailover_SIGKILLToNextGrantedLease$": "failover.txt",
		"^BenchmarkLedgerScale$/^10k$":                  "ledger.txt",
	}}
}

func (r *recorded) Run(_ context.Context, inv Invocation) ([]byte, error) {
	r.asked[inv.Bench]++
	if err := r.fail[inv.Bench]; err != nil {
		return nil, err
	}
	name, ok := r.files[inv.Bench]
	if !ok {
		r.t.Fatalf("no recorded run for -bench %s", inv.Bench)
	}
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		r.t.Fatal(err)
	}
	return data, nil
}

func render(t *testing.T, choriaProvisioner string, r Runner) string {
	t.Helper()
	tables := Plan(QuickSizes(), choriaProvisioner)
	start := time.Date(2026, 12, 2, 4, 5, 0, 0, time.UTC)
	rep := Report{
		Machine:           Machine{CPU: "AMD EPYC 7B13", Cores: 2, Memory: 24 << 30, Go: "go1.26.0", Kernel: "Linux 6.1.0"},
		ChoriaProvisioner: choriaProvisioner, Commit: "570e9dc1a2b3", Sizes: QuickSizes().Name,
		Start: start, End: start.Add(25*time.Minute + 3*time.Second),
		LoadBefore: "0.10 0.20 0.30", LoadAfter: "1.90 1.80 1.20",
		Tables: tables, Outcomes: Execute(context.Background(), tables, r, io.Discard),
	}
	var buf bytes.Buffer
	if err := Render(&buf, rep); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// The report of the recorded quick runs is testdata/report.md, byte for byte.
func TestRender_RecordedRuns(t *testing.T) {
	r := newRecorded(t)
	got := render(t, "/opt/choria-provisioner/choria-provisioner", r)
	want, err := os.ReadFile("testdata/report.md")
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("report differs from testdata/report.md; got:\n%s", got)
	}
	for pattern, n := range r.asked {
		if n != 1 {
			t.Errorf("-bench %s ran %d times, want once (rows that share a run share it)", pattern, n)
		}
	}
	if len(r.asked) != len(r.files) {
		t.Errorf("ran %d invocations, want %d: %v", len(r.asked), len(r.files), r.asked)
	}
}

func TestRender_ChoriaProvisionerUnsetIsNeverRunAndSaysSo(t *testing.T) {
	r := newRecorded(t)
	got := render(t, "", r)
	if r.asked["^BenchmarkChoriaProvisioner$"] != 0 {
		t.Error("choria-provisioner's benchmark ran without a binary")
	}
	row := lineWith(t, got, "| choria-provisioner | exec | 100 |")
	if !strings.Contains(row, "| "+ChoriaProvisionerUnset+" |") {
		t.Errorf("choria-provisioner's row does not say %q: %s", ChoriaProvisionerUnset, row)
	}
	if !strings.Contains(row, "MUSTER_CHORIA_PROVISIONER_BIN=/path/to/choria-provisioner") {
		t.Errorf("choria-provisioner's row does not say how to run it: %s", row)
	}
	edge := lineWith(t, got, "| muster-edge | exec | 100 |")
	if !strings.Contains(edge, "| – |") {
		t.Errorf("muster-edge's row compares with a run that did not happen: %s", edge)
	}
	if !strings.Contains(got, "| choria-provisioner | not given (MUSTER_CHORIA_PROVISIONER_BIN unset) |") {
		t.Errorf("the machine table does not say choria-provisioner was not given:\n%s", got)
	}
}

func TestRender_FailedRunSaysSoInItsRows(t *testing.T) {
	r := newRecorded(t)
	r.fail["^BenchmarkClusterEdge$"] = errors.New("exit status 1 (log /tmp/l/04.log)")
	got := render(t, "/opt/choria-provisioner/choria-provisioner", r)
	for _, mode := range []string{"standalone", "cluster (3 coordinators)"} {
		row := lineWith(t, got, "| "+mode+" | 1000 |")
		if !strings.Contains(row, "| failed: exit status 1 (log /tmp/l/04.log) |") {
			t.Errorf("row of the failed run does not say it failed: %s", row)
		}
	}
	// The other tables are unharmed.
	lineWith(t, got, "| muster-edge | persistent | 100 | ")
}

func lineWith(t *testing.T, report, prefix string) string {
	t.Helper()
	for l := range strings.SplitSeq(report, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	t.Fatalf("no line starts with %q in:\n%s", prefix, report)
	return ""
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{formatNumber(17540.4, 0), "17,540"},
		{formatNumber(1234567.891, 1), "1,234,567.9"},
		{formatNumber(0.4321, 2), "0.43"},
		{formatNumber(-1500, 0), "-1,500"},
		{formatRatio(5.94), "5.9x"},
		{formatRatio(0.85), "0.85x"},
		{formatRatio(1.0 / 48), "1/48"},
		{formatRatio(1.0 / 3), "1/3.0"},
		{cell("(10k|1M)\nnext"), `(10k\|1M) next`},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
