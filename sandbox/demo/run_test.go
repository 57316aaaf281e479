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
	"sync"
	"testing"
	"time"

	"github.com/seed96588659/muster/sandbox/lab"
)

// bins holds muster-edge and muster-helper-sample; nodeBinary is muster-sandbox for real nodes.
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
	// The edge is its own module: build it there, as make build does.
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bins+"/", "./cmd/muster-edge", "./cmd/muster-helper-sample")
	cmd.Dir = filepath.Join("..", "..", "edge")
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if b, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build edge: %v: %s\n", err, b)
		return 1
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

// syncBuffer is the run's terminal.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func smallRun(dir string, out *syncBuffer) Options {
	return Options{Dir: dir, Real: 1, Emulated: 30, BinDir: bins, NodeBinary: nodeBinary, Out: out,
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

func TestRun_ReachesThePlanAndLeavesNoProcess(t *testing.T) {
	dir := t.TempDir()
	out := &syncBuffer{}
	o := smallRun(dir, out)
	o.ExitWhenDone = true
	began := time.Now()
	res, err := Run(context.Background(), o)
	t.Logf("run took %v, of which %v from the edge's start to done", time.Since(began).Round(time.Millisecond), res.Summary.Elapsed.Round(time.Millisecond))
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
	// 1 real (outdated) + 30 emulated, of which 5 faulty: 26 end provisioned.
	if got := s.Report.Totals.Provisioned; got != 26 {
		t.Errorf("report provisioned = %d, want 26", got)
	}
	if s.Planned[Upgrade] != 4 || s.Report.Totals.ByAction["choria_provision#release_update"] < 4 {
		t.Errorf("upgrades: planned %d, release_update requests %d; want 4 and at least 4", s.Planned[Upgrade], s.Report.Totals.ByAction["choria_provision#release_update"])
	}
	if s.Outcomes["provisioned"] < 26 {
		t.Errorf("edge provisioned results = %d, want at least 26", s.Outcomes["provisioned"])
	}
	text := out.String()
	for _, want := range []string{"== done after", "discovered", "in flight", "provisioned", "failed", "double_provisioned", "none is left"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "\x1b[") {
		t.Errorf("non-terminal output has escape sequences:\n%q", text)
	}
	if len(res.Started) != 2 {
		t.Errorf("started %v, want the real node and the edge", res.Started)
	}
	assertNothingLeft(t, res, dir)
	if _, err := os.Stat(filepath.Join(dir, ReportName)); err != nil {
		t.Errorf("report file: %v", err)
	}
}

func TestRun_InterruptedMidwayStopsEverything(t *testing.T) {
	dir := t.TempDir()
	out := &syncBuffer{}
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
	if len(res.Started) != 2 {
		t.Errorf("started %v, want the real node and the edge", res.Started)
	}
	assertNothingLeft(t, res, dir)
}
