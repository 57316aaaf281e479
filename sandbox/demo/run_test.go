// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/gobuild"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
)

// bins holds muster-edge, muster-helper-sample and muster-coordinator; nodeBinary is
// muster-sandbox for real nodes.
var bins, nodeBinary string

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "demo-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	ctx := context.Background()
	if nodeBinary, err = lab.BuildNodeBinary(ctx, tmp); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := warmReleaseCache(nodeBinary, filepath.Join(tmp, "warm")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	bins = filepath.Join(tmp, "bin")
	// The edge and the coordinator are their own modules: build them there, as make build does.
	for _, b := range []struct {
		module string
		pkgs   []string
	}{
		{"edge", []string{"./cmd/muster-edge", "./cmd/muster-helper-sample"}},
		{"coordinator", []string{"./cmd/muster-coordinator"}},
	} {
		if err := gobuild.Build(ctx, filepath.Join("..", "..", b.module), append([]string{"-o", bins + "/"}, b.pkgs...)...); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}

// warmReleaseCache has a plain muster-sandbox lab publish (bzip2) the node binary's release
// into the release cache, which a lab in this test binary then finds: compressing 46 MB under
// -race takes about a minute, without it a few seconds.
func warmReleaseCache(node, dir string) error {
	cmd := exec.Command(node, "up", "--dir", dir, "--real", "0", "--emulated", "1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("warm release cache: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	limit := time.After(5 * time.Minute)
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("warm release cache: lab exited early: %v: %s", err, out.String())
		case <-limit:
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("warm release cache: no lab.json after 5 minutes: %s", out.String())
		case <-tick.C:
		}
		if _, err := os.Stat(filepath.Join(dir, lab.InfoFileName)); err == nil {
			break
		}
	}
	_ = cmd.Process.Signal(os.Interrupt)
	if err := <-exited; err != nil {
		return fmt.Errorf("warm release cache: stop lab: %v: %s", err, out.String())
	}
	return nil
}

func smallRun(dir string, out *testkit.LogBuffer) Options {
	return Options{Dir: dir, Real: 1, Emulated: 20, BinDir: bins, NodeBinary: nodeBinary, Out: out,
		Timeout: 3 * time.Minute, StopGrace: 20 * time.Second}
}

func assertNothingLeft(t *testing.T, res *Result, dir string) {
	t.Helper()
	if len(res.Leftover) > 0 {
		t.Errorf("processes left running: %v", res.Leftover)
	}
	for _, pid := range res.Started {
		if alive(pid) {
			t.Errorf("started process %d (%s) is still alive", pid, cmdline(pid))
		}
	}
	if left := leftovers(nil, dir); len(left) > 0 {
		t.Errorf("processes naming the run dir are alive: %v", left)
	}
}

// startedCount is what smallRun starts: a real node per region, three coordinators, an edge
// per region.
const startedCount = 2 + 3 + 2

func TestRun_ReachesThePlanSurvivesTheLeadersDeathAndLeavesNoProcess(t *testing.T) {
	dir := t.TempDir()
	out := &testkit.LogBuffer{}
	o := smallRun(dir, out)
	o.ExitWhenDone, o.Failover = true, true
	began := time.Now()
	res, err := Run(context.Background(), o)
	t.Logf("run took %v, of which %v from the edges' start to done", time.Since(began).Round(time.Millisecond), res.Summary.Elapsed.Round(time.Millisecond))
	if err != nil {
		t.Fatalf("run: %v\noutput:\n%s", err, out)
	}
	s := res.Summary
	if !res.Summarised || !s.Done {
		t.Fatalf("summarised %v, done %v; missing %v\noutput:\n%s", res.Summarised, s.Done, s.Missing, out)
	}
	for e, n := range s.Planned {
		if s.Met[e] != n {
			t.Errorf("%s: %d of %d nodes reached it", e, s.Met[e], n)
		}
	}
	if len(s.Unexpected) > 0 {
		t.Errorf("unexpected ends: %v", s.Unexpected)
	}
	if got := s.Report.Totals.DoubleProvisioned; got != 0 {
		t.Errorf("double_provisioned = %d, want 0: %+v", got, s.Report.DoubleProvisioned)
	}
	// Per region 1 real (outdated) + 20 emulated, of which 5 faulty: 16 end provisioned.
	if got := s.Report.Totals.Provisioned; got != 32 {
		t.Errorf("report provisioned = %d, want 32", got)
	}
	if s.Planned[Upgrade] != 8 || s.Report.Totals.ByAction["choria_provision#release_update"] < 8 {
		t.Errorf("upgrades: planned %d, release_update requests %d; want 8 and at least 8", s.Planned[Upgrade], s.Report.Totals.ByAction["choria_provision#release_update"])
	}
	// Per region 20 emulated, 5 faulty (6 in the first, with its flapping node), 3 outdated: 12
	// healthy (11).
	if h := s.Healthy; h.Nodes != 23 || s.Planned[Healthy] != 23 || h.Took <= 0 || h.Took > s.Elapsed || h.SteadyPerMinute() <= 0 {
		t.Errorf("healthy pace %+v (%.0f nodes/min) of %d planned over %v, want all 23 within the run and a steady rate", h, h.SteadyPerMinute(), s.Planned[Healthy], s.Elapsed)
	}
	if len(s.Regions) != 2 {
		t.Fatalf("regions in the summary: %+v", s.Regions)
	}
	for i, r := range s.Regions {
		// The first region's flapping node is held, not provisioned, beside each region's duplicate.
		provisioned, held := 16, 1
		if i == 0 {
			provisioned, held = 15, 2
		}
		if r.Ledger["provisioned"] != provisioned || r.Ledger["held"] != held || r.Ledger["shutdown"] != 1 || r.Ledger["leased"] != 0 {
			t.Errorf("region %s ledger %v, want %d provisioned, %d held, 1 shut down, none leased", r.Name, r.Ledger, provisioned, held)
		}
		if r.Edge.Outcomes["provisioned"] < int64(provisioned) {
			t.Errorf("region %s edge provisioned results = %d, want at least %d", r.Name, r.Edge.Outcomes["provisioned"], provisioned)
		}
	}
	// Both edges provisioned, each only its own region's nodes.
	for id, n := range s.Report.Nodes {
		for action, c := range n.Actions {
			for caller := range c.Callers {
				if region := regionOf(id); region != "" && !strings.Contains(caller, "edge-"+region+"-") {
					t.Errorf("node %s got %s from %s, not its region's edge", id, action, caller)
				}
			}
		}
	}

	f := res.Failover
	switch {
	case f == nil:
		t.Fatalf("no failover\noutput:\n%s", out)
	case f.NewLeader == "" || f.NewLeader == f.Killed || f.NewTerm <= f.OldTerm:
		t.Errorf("failover %+v: want a new leader in a later term", f)
	case !f.EdgesFollowed:
		t.Errorf("failover %+v: the edges did not follow", f)
	}
	if f != nil && alive(f.KilledPID) {
		t.Errorf("killed leader %d is alive", f.KilledPID)
	}

	text := out.String()
	for _, want := range []string{"== done after", "healthy nodes: 23 of 23 provisioned", "held for approval (3)", "approve --addr", "flapping", "steady rate", "eu discovered", "us leased", "eu provisioned", "us failed", "leader c",
		"REGION", "double_provisioned", "== failover: kill -9", "new leader", "resume through the new leader", "none is left", "rm -rf " + dir} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if s.pendingCount() > 0 && (!strings.Contains(text, "still pending in the ledger") || len(s.Pending) == 0) {
		t.Errorf("the ledger holds %d nodes waiting or leased at the summary, which does not name them (%v):\n%s", s.pendingCount(), s.Pending, text)
	}
	if strings.Contains(text, "\x1b[") {
		t.Errorf("non-terminal output has escape sequences:\n%q", text)
	}
	if len(res.Started) != startedCount {
		t.Errorf("started %v, want the real nodes, the coordinators and the edges", res.Started)
	}
	assertNothingLeft(t, res, dir)
	if _, err := os.Stat(filepath.Join(dir, ReportName)); err != nil {
		t.Errorf("report file: %v", err)
	}
	assertSecretsKept(t, dir, text)
}

// regionOf is the region of a lab identity (emu-eu-00001, real-us-1...), "" if none.
func regionOf(id string) string {
	for _, r := range DefaultRegions() {
		if strings.Contains(id, "-"+r+"-") {
			return r
		}
	}
	return ""
}

// assertSecretsKept checks the credentials file is the user's alone and that no token in it
// reached the terminal or any log of the run.
func assertSecretsKept(t *testing.T, dir, terminal string) {
	t.Helper()
	path := filepath.Join(dir, CredentialsName)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("credentials file: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("credentials file mode %v, want 0600", fi.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	var tokens []string
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "export MUSTER_AUTH_ADMIN_TOKEN="); ok {
			tokens = append(tokens, v)
		}
		if _, v, ok := strings.Cut(line, "="); ok && strings.HasPrefix(line, "# edge-") {
			tokens = append(tokens, v)
		}
	}
	if len(tokens) != 3 {
		t.Fatalf("credentials file holds %d tokens, want the admin's and two edges':\n%s", len(tokens), b)
	}
	logs := map[string]string{"terminal": terminal}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".log") {
			l, _ := os.ReadFile(p)
			logs[p] = string(l)
		}
		return nil
	})
	for _, tok := range tokens {
		for name, text := range logs {
			if len(tok) < 16 || strings.Contains(text, tok) {
				t.Errorf("a token of the credentials file is in %s", name)
			}
		}
	}
}

func TestRun_InterruptedMidwayStopsEverything(t *testing.T) {
	dir := t.TempDir()
	out := &testkit.LogBuffer{}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	interrupted := errors.New("test pressed Ctrl-C")
	go func() {
		// Interrupt once the edge is at work: the first configure reached a node.
		actions := filepath.Join(dir, LabDirName, lab.ActionsFileName)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for range tick.C {
			if b, _ := os.ReadFile(actions); bytes.Contains(b, []byte("choria_provision#configure")) {
				cancel(interrupted)
				return
			}
			if ctx.Err() != nil {
				return
			}
		}
	}()
	res, err := Run(ctx, smallRun(dir, out))
	if !errors.Is(err, interrupted) {
		t.Fatalf("run: %v, want the interruption\noutput:\n%s", err, out)
	}
	if res.Summarised {
		t.Errorf("summary printed although interrupted before done")
	}
	if len(res.Started) != startedCount {
		t.Errorf("started %v, want the real nodes, the coordinators and the edges", res.Started)
	}
	assertNothingLeft(t, res, dir)
}
