// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/seed96588659/muster/sandbox/lab"
	"github.com/seed96588659/muster/sandbox/report"
)

// edgeReadyTimeout bounds the edge's start (connect, subscribe, first sweep under way).
const edgeReadyTimeout = time.Minute

// Result is what a run did.
type Result struct {
	// Summary is the run's end state, printed when the run got that far.
	Summary Summary
	// Summarised is true once the summary was printed.
	Summarised bool
	// Started are the PIDs of the processes this run started itself: the edge and the real nodes.
	Started []int
	// Leftover lists processes still alive after the run stopped everything; empty is the promise.
	Leftover []Process
	// MonitorURL is the edge's monitor endpoint while it ran.
	MonitorURL string
}

// Run starts the lab and the edge, shows progress until the plan is reached (or Options.Timeout
// passes), prints the summary and, unless Options.ExitWhenDone, keeps everything running until
// ctx ends. It always stops what it started before returning; the error says what went wrong:
// not done in time, a double provisioning, an edge that died, or a process left behind.
func Run(ctx context.Context, o Options) (*Result, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("demo: run dir: %w", err)
	}
	log := o.Logger
	if log == nil {
		f, err := os.OpenFile(filepath.Join(o.Dir, RunLogName), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("demo: run log: %w", err)
		}
		defer f.Close()
		log = slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	r := &runner{o: o, log: log, res: &Result{}, plan: newPlan("eu", o.Real, o.Emulated)}
	runErr := r.run(ctx)
	stopErr := r.stop()
	return r.res, errors.Join(runErr, stopErr)
}

// runner holds one run's parts so that stop can undo whatever run got to.
type runner struct {
	o    Options
	log  *slog.Logger
	res  *Result
	plan *plan
	lab  *lab.Lab
	edge *edgeProc
}

func (r *runner) say(format string, args ...any) { fmt.Fprintf(r.o.Out, format+"\n", args...) }

func (r *runner) run(ctx context.Context) error {
	o := r.o
	labDir := filepath.Join(o.Dir, LabDirName)
	r.say("== starting the lab in %s: %d real and %d emulated nodes (a few need an upgrade, a few are faulty)", labDir, o.Real, o.Emulated)
	l, err := lab.Start(ctx, lab.Options{
		Dir: labDir, Regions: []string{r.plan.region}, Real: o.Real, Emulated: o.Emulated,
		Faults: r.plan.faults, NodeBinary: o.NodeBinary,
		BaseVersion: TargetVersion, Versions: r.plan.realVersions, UpgradeVersion: TargetVersion,
		Logger: r.log,
	})
	if err != nil {
		return fmt.Errorf("start lab: %w", err)
	}
	r.lab = l
	info := l.Info()
	region := info.Regions[r.plan.region]
	for _, n := range region.RealNodes {
		r.res.Started = append(r.res.Started, n.PID)
	}
	for _, f := range region.FailedNodes {
		r.say("   node %s did not start (%s); it is left out of the plan", f.Identity, f.Error)
		r.plan.drop(f.Identity)
	}

	r.say("== starting %s (standalone, upgrades and PKI on) with %s; its log: %s", EdgeName, HelperName, filepath.Join(o.Dir, EdgeLogName))
	r.edge, err = startEdge(edgeSpec{
		binDir: o.BinDir, labJSON: l.InfoFile(), broker: region.BrokerURL, ca: region.CA, caKey: region.CAKey,
		deferRE: r.plan.deferRE, shutRE: r.plan.shutdownRE, workers: o.Workers, upgrade: TargetVersion,
		logFile: filepath.Join(o.Dir, EdgeLogName), stopWait: o.StopGrace,
	})
	if err != nil {
		return err
	}
	start := time.Now()
	r.res.Started = append(r.res.Started, r.edge.PID())
	r.res.MonitorURL = r.edge.monitor
	readyCtx, cancel := context.WithTimeout(ctx, edgeReadyTimeout)
	err = r.edge.waitReady(readyCtx)
	cancel()
	if err != nil {
		return fmt.Errorf("%w (edge log: %s)", err, r.edgeLogTail())
	}

	sum, err := r.follow(ctx, start)
	r.res.Summary = sum
	if err != nil {
		return err
	}
	r.res.Summarised = true
	sum.Print(r.o.Out)
	if b, err := json.MarshalIndent(sum.Report, "", "  "); err == nil {
		_ = os.WriteFile(filepath.Join(o.Dir, ReportName), b, 0o644)
	}
	var verdicts []error
	if !sum.Done {
		verdicts = append(verdicts, fmt.Errorf("not done after %v: %d items missing (listed above)", o.Timeout, len(sum.Missing)))
	}
	if n := sum.Report.Totals.DoubleProvisioned; n > 0 {
		verdicts = append(verdicts, fmt.Errorf("%d nodes were provisioned twice", n))
	}
	if len(verdicts) > 0 || o.ExitWhenDone {
		return errors.Join(verdicts...)
	}
	r.hints()
	select {
	case <-ctx.Done():
	case <-r.edge.exited:
		return fmt.Errorf("edge exited while idle: %v (edge log: %s)", r.edge.waitErr, r.edgeLogTail())
	}
	return nil
}

// follow scrapes the edge and reads the action log until the plan is reached, the timeout
// passes, the edge dies or ctx ends; the summary reflects the last reading.
func (r *runner) follow(ctx context.Context, start time.Time) (Summary, error) {
	workers := r.o.Workers
	if workers == 0 {
		workers = 64 // the edge's default (edge/config.DefaultWorkers)
	}
	disp := newDisplay(r.o.Out, r.o.TTY, len(r.plan.nodes), workers, start)
	scr := &scraper{url: r.edge.monitor + "/metrics", client: &http.Client{Timeout: 2 * time.Second}}
	deadline := time.NewTimer(r.o.Timeout)
	defer deadline.Stop()
	tick := time.NewTicker(r.o.Scrape)
	defer tick.Stop()

	sum := Summary{Nodes: len(r.plan.nodes), Planned: map[Expect]int{}}
	for _, e := range expectations() {
		sum.Planned[e] = r.plan.count(e)
	}
	var snap Snapshot
	var st status
	var rep report.Report
	finish := func(done bool) Summary {
		disp.finish()
		sum.Done, sum.Elapsed = done, time.Since(start)
		sum.Met, sum.Missing, sum.Unexpected = st.Met, st.Missing, st.Unexpected
		sum.Outcomes, sum.Report = snap.Outcomes, rep
		return sum
	}
	for {
		select {
		case <-ctx.Done():
			finish(false)
			return sum, fmt.Errorf("interrupted before done: %w", context.Cause(ctx))
		case <-r.edge.exited:
			finish(false)
			return sum, fmt.Errorf("edge exited: %v (edge log: %s)", r.edge.waitErr, r.edgeLogTail())
		case <-deadline.C:
			return finish(false), nil
		case <-tick.C:
		}
		s, err := scr.scrape(ctx)
		if err != nil {
			r.log.Warn("scrape failed", "error", err)
			continue
		}
		snap = s
		disp.update(snap)
		rp, err := report.FromFile(r.lab.ActionsFile())
		if err != nil {
			// A line being appended as we read; the next tick reads it whole.
			r.log.Warn("read action log", "error", err)
			continue
		}
		rep = rp
		st = r.plan.evaluate(rep, snap)
		if st.done() {
			return finish(true), nil
		}
	}
}

// hints says what to look at while everything keeps running.
func (r *runner) hints() {
	labDir := filepath.Join(r.o.Dir, LabDirName)
	cmd := r.o.Command
	if cmd == "" {
		cmd = "muster-sandbox"
	}
	r.say("\n== everything keeps running; try:")
	r.say("   curl -s %s/metrics | grep -E '^(choria_provisioner|muster_edge)_'", r.edge.monitor)
	r.say("   %s report --dir %s | less", cmd, labDir)
	r.say("   tail -f %s", filepath.Join(r.o.Dir, EdgeLogName))
	if len(r.lab.Info().Regions[r.plan.region].RealNodes) > 0 {
		r.say("   less %s", filepath.Join(r.lab.Region(r.plan.region).NodeDir(lab.RealIdentity(r.plan.region, 1)), "server.log"))
	}
	r.say("   the lab for any Choria client: %s", r.lab.InfoFile())
	r.say("Press Ctrl-C to stop the edge, the nodes and the brokers.")
}

// stop ends the edge (SIGTERM, then SIGKILL), then the lab, and looks for survivors.
func (r *runner) stop() error {
	var errs []error
	if r.edge != nil || r.lab != nil {
		r.say("== stopping")
	}
	if r.edge != nil {
		if err := r.edge.stop(); err != nil {
			errs = append(errs, err)
		}
	}
	if r.lab != nil {
		if err := r.lab.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop lab: %w", err))
		}
	}
	r.res.Leftover = leftovers(r.res.Started, r.o.Dir)
	if len(r.res.Leftover) > 0 {
		names := make([]string, len(r.res.Leftover))
		for i, p := range r.res.Leftover {
			names[i] = p.String()
		}
		errs = append(errs, fmt.Errorf("processes left running: %s", strings.Join(names, "; ")))
	} else if r.edge != nil || r.lab != nil {
		r.say("   stopped %d processes started by this run; none is left", len(r.res.Started))
	}
	return errors.Join(errs...)
}

// edgeLogTail is the end of the edge's log, for errors.
func (r *runner) edgeLogTail() string {
	b, err := os.ReadFile(filepath.Join(r.o.Dir, EdgeLogName))
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-5):], "\n")
}
