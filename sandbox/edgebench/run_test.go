// SPDX-License-Identifier: Apache-2.0

package edgebench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/audit"
	"github.com/seed96588659/muster/sandbox/fleet/faults"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/fleet/recorder"
	"github.com/seed96588659/muster/sandbox/internal/procstat"
)

// region is the lab's only region.
const region = "eu"

// provisioner builds the command that provisions the lab's region; dir is the run's own directory
// for its configuration and log.
type provisioner func(l *lab.Lab, dir string) (*exec.Cmd, error)

// runSpec is one measured run.
type runSpec struct {
	nodes int
	// faults are --fault rules for the emulated fleet (faults.FlagHelp).
	faults []string
	start  provisioner
}

// runResult is what one run measured.
type runResult struct {
	nodes int
	// wall is from the provisioner's start to the last successful restart.
	wall time.Duration
	// window is from the first to the last successful restart.
	window time.Duration
	// usage is the provisioner's /proc accounting when the last node had restarted.
	usage procstat.Usage
	// labCPU is this process's CPU over the run: the in-process lab's broker and emulated fleet
	// (and the watch of actions.jsonl), which share the machine with the provisioner.
	labCPU time.Duration
	// report is the lab's report of the run.
	report audit.Report
	// actions are the lab's recorded actions.
	actions []recorder.Action
}

// runOnce starts a fresh lab, runs the provisioner until every node has restarted, and checks
// that each was provisioned exactly once. Lab start and stop are outside the benchmark timer.
func runOnce(b *testing.B, spec runSpec) runResult {
	b.Helper()
	b.StopTimer()
	dir := b.TempDir()
	var set *faults.Set
	if len(spec.faults) > 0 {
		s, err := faults.ParseFlags(spec.faults)
		if err != nil {
			b.Fatalf("faults: %v", err)
		}
		set = s
	}
	ctx := context.Background()
	l, err := lab.Start(ctx, lab.Options{
		Dir: filepath.Join(dir, "lab"), Regions: []string{region}, Emulated: spec.nodes, Faults: set,
	})
	if err != nil {
		b.Fatalf("start lab of %d nodes: %v", spec.nodes, err)
	}
	defer func() {
		if err := l.Stop(); err != nil {
			b.Errorf("stop lab: %v", err)
		}
	}()
	if got := len(l.Region(region).EmulatedNodes()); got != spec.nodes {
		b.Fatalf("lab started %d of %d emulated nodes", got, spec.nodes)
	}

	cmd, err := spec.start(l, dir)
	if err != nil {
		b.Fatal(err)
	}
	logPath := filepath.Join(dir, "provisioner.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		b.Fatalf("create provisioner log: %v", err)
	}
	defer logFile.Close()
	cmd.Stdout, cmd.Stderr = logFile, logFile

	w := newRestartWatch(l.ActionsFile())
	b.StartTimer()
	started := time.Now()
	labBefore := testkit.SelfCPU(b)
	if err := cmd.Start(); err != nil {
		b.Fatalf("start %s: %v", cmd.Path, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	defer func() {
		if !stopped {
			_ = cmd.Process.Kill()
			<-exited
		}
	}()

	deadline := time.After(2*time.Minute + time.Duration(spec.nodes)*60*time.Millisecond)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var usage procstat.Usage
	var labCPU time.Duration
	for done := false; !done; {
		select {
		case err := <-exited:
			stopped = true
			b.Fatalf("%s exited before all %d nodes restarted (%v); log %s:\n%s", cmd.Path, spec.nodes, err, logPath, tail(logPath))
		case <-deadline:
			n, _ := w.poll()
			b.Fatalf("%s: %d of %d nodes restarted before the deadline; log %s:\n%s", cmd.Path, n, spec.nodes, logPath, tail(logPath))
		case <-tick.C:
			n, err := w.poll()
			if err != nil {
				b.Fatal(err)
			}
			if n < spec.nodes {
				continue
			}
			if usage, err = procstat.Read(cmd.Process.Pid); err != nil {
				b.Fatal(err)
			}
			labCPU = testkit.SelfCPU(b) - labBefore
			done = true
		}
	}
	b.StopTimer()
	if err := stop(cmd, exited); err != nil {
		b.Errorf("stop %s: %v; log %s:\n%s", cmd.Path, err, logPath, tail(logPath))
	}
	stopped = true

	actions, err := recorder.ReadFile(l.ActionsFile())
	if err != nil {
		b.Fatalf("read actions: %v", err)
	}
	rep := audit.Build(actions)
	checkExactlyOnce(b, l.Region(region).EmulatedNodes(), rep)
	return runResult{
		nodes:   spec.nodes,
		wall:    w.last.Sub(started),
		window:  w.last.Sub(w.first),
		usage:   usage,
		labCPU:  labCPU,
		report:  rep,
		actions: actions,
	}
}

// stop ends the provisioner with SIGTERM, as an operator would, and SIGKILL after 30 s.
func stop(cmd *exec.Cmd, exited <-chan error) error {
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("signal: %w", err)
	}
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if errors.As(err, &ee) && !ee.Exited() {
			return nil // ended by the signal, as asked
		}
		return err
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		return errors.New("still running 30 s after SIGTERM: killed")
	}
}

// checkExactlyOnce fails the benchmark unless every node has exactly one successful configure
// and one successful restart and the report finds no double provisioning.
func checkExactlyOnce(b *testing.B, nodes []string, rep audit.Report) {
	b.Helper()
	if len(rep.DoubleProvisioned) > 0 {
		b.Errorf("%d nodes double provisioned, first %s by %v", len(rep.DoubleProvisioned), rep.DoubleProvisioned[0].Node, rep.DoubleProvisioned[0].Callers)
	}
	if rep.Totals.Provisioned != len(nodes) {
		b.Errorf("report: %d of %d nodes provisioned", rep.Totals.Provisioned, len(nodes))
	}
	bad := 0
	for _, id := range nodes {
		n := rep.Nodes[id]
		if n == nil || okCount(n, audit.Configure) != 1 || okCount(n, audit.Restart) != 1 {
			if bad < 5 {
				b.Errorf("node %s: want exactly one successful configure and restart, got %d and %d", id, okCount(n, audit.Configure), okCount(n, audit.Restart))
			}
			bad++
		}
	}
	if bad > 0 {
		b.Errorf("%d of %d nodes not provisioned exactly once", bad, len(nodes))
	}
}

func okCount(n *audit.Node, action string) int {
	if n == nil || n.Actions[action] == nil {
		return 0
	}
	return n.Actions[action].OK
}

// tail is the last 4 KiB of a log file, for a failure message.
func tail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(data) > 4096 {
		data = data[len(data)-4096:]
	}
	return string(data)
}

// reportRuns reports the mean of each figure over the benchmark's runs.
func reportRuns(b *testing.B, runs []runResult) {
	b.Helper()
	var nodes, self, children, labCPU, window, wall float64
	var rss int64
	provisioned, double := 0, 0
	for _, r := range runs {
		nodes += float64(r.nodes)
		self += r.usage.Self.Seconds()
		children += r.usage.Children.Seconds()
		labCPU += r.labCPU.Seconds()
		window += r.window.Seconds()
		wall += r.wall.Seconds()
		rss = max(rss, r.usage.PeakRSS)
		provisioned += r.report.Totals.Provisioned
		double += len(r.report.DoubleProvisioned)
	}
	k := float64(len(runs))
	if window > 0 {
		b.ReportMetric(nodes/window*60, "nodes/min")
	}
	b.ReportMetric(wall/k, "wall-s")
	b.ReportMetric(self/nodes*1000, "cpu-ms/node")
	b.ReportMetric(children/nodes*1000, "helper-cpu-ms/node")
	b.ReportMetric(labCPU/nodes*1000, "lab-cpu-ms/node")
	b.ReportMetric(float64(rss)/(1<<20), "rss-MB")
	b.ReportMetric(float64(provisioned)/k, "provisioned")
	b.ReportMetric(float64(double)/k, "double-provisioned")
	b.ReportMetric(0, "ns/op") // one op is a whole lab run: wall-s says it better
}
