// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/sandbox/fleet/audit"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/fleet/recorder"
)

// writeActions writes an action log of n provisioned nodes, and one node configured by two
// callers, in dir.
func writeActions(t *testing.T, dir string, n int) {
	t.Helper()
	rec, err := recorder.Open(filepath.Join(dir, lab.ActionsFileName), nil)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	write := func(node, action, caller string) {
		at = at.Add(time.Millisecond)
		if err := rec.Write(recorder.Action{Time: at, Region: "eu", Node: node, Action: action, Caller: caller, OK: true}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		node := fmt.Sprintf("emu-%04d.eu.example.net", i)
		for _, a := range []string{"choria_provision#gen25519", "choria_provision#configure", "choria_provision#restart"} {
			write(node, a, "choria=edge-eu-1.mcollective")
		}
	}
	write("twice.eu.example.net", "choria_provision#configure", "choria=edge-eu-1.mcollective")
	write("twice.eu.example.net", "choria_provision#configure", "choria=edge-eu-2.mcollective")
	write("twice.eu.example.net", "choria_provision#restart", "choria=edge-eu-2.mcollective")
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReport_PrintsASummaryAndTheJSONOnRequest: report reads like a summary a person takes in at
// a glance (totals, actions, provisioned, each double provisioning), however large the fleet;
// --json prints the whole report for a program.
func TestReport_PrintsASummaryAndTheJSONOnRequest(t *testing.T) {
	dir := t.TempDir()
	writeActions(t, dir, 2000)
	out, err := run("report", "--dir", dir)
	if err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	if len(out) > 4000 || json.Valid([]byte(out)) {
		t.Fatalf("report printed %d bytes (JSON: %v); want a short summary:\n%.2000s", len(out), json.Valid([]byte(out)), out)
	}
	for _, want := range []string{"2001 nodes", "provisioned", "2001", "choria_provision#configure", "double provisioned: twice.eu.example.net", "--json"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	out, err = run("report", "--dir", dir, "--json")
	if err != nil {
		t.Fatalf("report --json: %v", err)
	}
	var rp audit.Report
	if err := json.Unmarshal([]byte(out), &rp); err != nil || len(rp.Nodes) != 2001 || rp.Totals.DoubleProvisioned != 1 {
		t.Fatalf("report --json: %v, %d nodes, %d double", err, len(rp.Nodes), rp.Totals.DoubleProvisioned)
	}
}
