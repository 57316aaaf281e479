// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed96588659/muster/sandbox/fleet/audit"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/stack/edgefile"
)

func run(args ...string) (string, error) {
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestUp_BadFlagsAreNamed(t *testing.T) {
	dir := t.TempDir()
	badYAML := filepath.Join(dir, "faults.yaml")
	if err := os.WriteFile(badYAML, []byte("faults:\n  - select: {identity: \"emu-*\"}\n    silent: maybe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"up"}, "--dir"},
		{[]string{"up", "--dir", dir, "--real", "-1"}, "--real"},
		{[]string{"up", "--dir", dir, "--emulated", "-5"}, "--emulated"},
		{[]string{"up", "--dir", dir, "--real", "0"}, "--real and --emulated"},
		{[]string{"up", "--dir", dir, "--regions", "eu,,us"}, "--regions"},
		{[]string{"up", "--dir", dir, "--real", "x"}, "--real"},
		{[]string{"up", "--dir", dir, "--clients", "0"}, "--clients"},
		{[]string{"up", "--dir", dir, "--versions", "0.29.4,,1.0"}, "--versions"},
		{[]string{"up", "--dir", dir, "--nope"}, "--nope"},
		{[]string{"up", "--dir", dir, "--election-ttl", "10s"}, "--election-ttl needs --streams"},
		{[]string{"up", "--dir", dir, "--streams", "--election-ttl", "2s"}, "--election-ttl"},
		{[]string{"up", "--dir", dir, "--faults", badYAML}, "faults.yaml:2"},
		{[]string{"up", "--dir", dir, "--faults", filepath.Join(dir, "missing.yaml")}, "--faults"},
		{[]string{"up", "--dir", dir, "--fault", "garbage"}, "--fault"},
		{[]string{"up", "--dir", dir, "--fault", "index=2:rebuilt=soon"}, `--fault "index=2:rebuilt=soon": item "rebuilt=soon": after "soon": want a positive duration`},
		{[]string{"up", "--dir", dir, "--fault", "index=2:flapping=1s/0"}, `times "0": want a positive integer`},
		{[]string{"report"}, "--dir"},
		{[]string{"report", "--dir", filepath.Join(dir, "none")}, "actions.jsonl"},
	}
	for _, c := range cases {
		_, err := run(c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want it to name %q", c.args, err, c.want)
		}
	}
}

func TestUp_RegionNamesAreChecked(t *testing.T) {
	_, err := run("up", "--dir", t.TempDir(), "--real", "0", "--emulated", "1", "--regions", "EU West")
	if err == nil || !strings.Contains(err.Error(), `region "EU West"`) {
		t.Fatalf("error %v", err)
	}
}

// TestUp_RunsUntilSIGTERMThenStopsNodes runs the real binary: up, lab.json, each region's edge
// configuration and its command, a report, SIGTERM.
func TestUp_RunsUntilSIGTERMThenStopsNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	tmp := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := lab.BuildNodeBinary(ctx, tmp)
	if err != nil {
		t.Fatal(err)
	}
	// The sample helper the edge configurations run is looked for next to the binary.
	if err := os.WriteFile(filepath.Join(tmp, edgefile.SampleHelper), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "lab")
	var stdout, stderr bytes.Buffer
	example, err := filepath.Abs("../../fleet/faults/testdata/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	up := exec.CommandContext(ctx, bin, "up", "--dir", dir, "--real", "1", "--emulated", "20", "--regions", "eu,us", "--versions", "0.27.9",
		"--streams", "--election-ttl", "5s", "--faults", example, "--fault", "index=19:version=9.9.9")
	up.Stdout, up.Stderr = &stdout, &stderr
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- up.Wait() }()

	var info lab.Info
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if info, err = lab.ReadInfo(filepath.Join(dir, "lab.json")); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("up exited before writing lab.json: %v\n%s", err, stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no lab.json: %s", stderr.String())
		}
	}
	var pids []int
	for _, name := range []string{"eu", "us"} {
		r, ok := info.Regions[name]
		if !ok || len(r.RealNodes) != 1 || r.EmulatedCount != 20 || r.BrokerURL == "" {
			t.Fatalf("region %s in lab.json: %+v", name, r)
		}
		if !r.Streams || r.ElectionBucket != "CHORIA_LEADER_ELECTION" || r.ElectionTTL != "5s" {
			t.Errorf("region %s in lab.json: streams %v, election bucket %q, ttl %q; want true, CHORIA_LEADER_ELECTION, 5s (--streams)", name, r.Streams, r.ElectionBucket, r.ElectionTTL)
		}
		pids = append(pids, r.RealNodes[0].PID)
		if v := r.RealNodes[0].Version; v != "0.27.9" {
			t.Errorf("region %s real node version %q, want the --versions value", name, v)
		}
	}

	out, err := exec.CommandContext(ctx, bin, "report", "--dir", dir, "--json").Output()
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	var rp audit.Report
	if err := json.Unmarshal(out, &rp); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, out)
	}

	if err := up.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("up did not stop cleanly: %v\n%s", err, stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("up still running a minute after SIGTERM")
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("real node pid %d still alive after up stopped", pid)
		}
	}
	if !strings.Contains(stderr.String(), "lab stopped") {
		t.Errorf("no clean stop logged:\n%s", stderr.String())
	}
	for _, name := range []string{"eu", "us"} {
		file := filepath.Join(dir, name, edgefile.Name)
		if want := filepath.Join(tmp, "muster-edge") + " run --config " + file; !strings.Contains(stdout.String(), want) {
			t.Errorf("up printed %q, want the line %q", stdout.String(), want)
		}
		// The real nodes restart into a configuration with certificates only when the edge
		// asks them for a CSR (features.pki), which the file's helper signs with the lab's CA.
		if body, err := os.ReadFile(file); err != nil || !strings.Contains(string(body), "region: "+name) || !strings.Contains(string(body), "pki: true") {
			t.Errorf("edge configuration of %s: %v\n%s", name, err, body)
		}
	}
}
