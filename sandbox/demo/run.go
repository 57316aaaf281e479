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

	"github.com/seed96588659/muster/sandbox/fleet/audit"
	"github.com/seed96588659/muster/sandbox/fleet/faults"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/stack/edgefile"
)

// edgeReadyTimeout bounds an edge's start (connect, subscribe, first sweep under way).
const edgeReadyTimeout = time.Minute

// Result is what a run did.
type Result struct {
	// Summary is the run's end state, printed when the run got that far.
	Summary Summary
	// Summarised is true once the summary was printed.
	Summarised bool
	// Started are the PIDs of the processes this run started itself: the coordinators, the
	// edges and the real nodes.
	Started []int
	// Leftover lists processes still alive after the run stopped everything; empty is the promise.
	Leftover []Process
	// MonitorURLs are the edges' monitor endpoints by region while they ran.
	MonitorURLs map[string]string
	// Coordinators are the members' API base URLs.
	Coordinators []string
	// Failover is what Options.Failover did; nil if it did not run.
	Failover *Failover
}

// Failover is the leader killed and the leader that followed.
type Failover struct {
	Killed    string
	KilledPID int
	OldTerm   uint64
	NewLeader string
	NewTerm   uint64
	// Elected is the time from the kill until the status names a new leader.
	Elected time.Duration
	// EdgesFollowed is true once every edge learned a pause and a resume made on the new leader.
	EdgesFollowed bool
}

// Run starts the lab, the coordinators and one cluster-mode edge per region, shows progress
// until the plan is reached (or Options.Timeout passes), prints the summary and, unless
// Options.ExitWhenDone, keeps everything running until ctx ends. It always stops what it
// started before returning; the error says what went wrong: not done in time, a double
// provisioning, an edge that died, a failed failover, or a process left behind.
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
	r := &runner{o: o, log: log, res: &Result{MonitorURLs: map[string]string{}}, plans: map[string]*plan{}}
	for _, region := range o.Regions {
		r.plans[region] = newPlan(region, o.Real, o.Emulated, region == o.Regions[0])
	}
	runErr := r.run(ctx)
	stopErr := r.stop()
	r.sayLeftBehind()
	return r.res, errors.Join(runErr, stopErr)
}

// runner holds one run's parts so that stop can undo whatever run got to.
type runner struct {
	o       Options
	log     *slog.Logger
	res     *Result
	plans   map[string]*plan // by region
	lab     *lab.Lab
	cluster *cluster
	edges   []*edgeProc // in the order of o.Regions
}

func (r *runner) say(format string, args ...any) { fmt.Fprintf(r.o.Out, format+"\n", args...) }

func (r *runner) run(ctx context.Context) error {
	o := r.o
	if err := r.startLab(ctx); err != nil {
		return err
	}
	names := map[string]string{}
	for _, region := range o.Regions {
		names[region] = r.lab.Region(region).Clients()[0].Identity
	}
	sec, err := newSecrets(names)
	if err != nil {
		return err
	}
	if err := r.startCluster(ctx, sec); err != nil {
		return err
	}
	// The run's clock starts with the edges: their start-up is part of how long the nodes took.
	start := time.Now()
	if err := r.startEdges(ctx, sec); err != nil {
		return err
	}

	sum, err := r.follow(ctx, start)
	r.res.Summary = sum
	if err != nil {
		return err
	}
	r.res.Summarised = true
	if sum.pendingCount() > 0 {
		sum.Pending = r.pending(ctx)
		r.res.Summary = sum
	}
	sum.Print(r.o.Out)
	r.printHeld(ctx)
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
	if len(verdicts) > 0 {
		return errors.Join(verdicts...)
	}
	if o.Failover {
		if err := r.failover(ctx, sum); err != nil {
			return err
		}
	}
	if o.ExitWhenDone {
		return nil
	}
	r.hints()
	return r.watch(ctx)
}

// startLab starts the in-process lab: every region's broker and fleet, the faults of every plan.
func (r *runner) startLab(ctx context.Context) error {
	o := r.o
	labDir := filepath.Join(o.Dir, LabDirName)
	r.say("== starting the lab in %s: regions %s, each %d real and %d emulated nodes (a few need an upgrade, a few are faulty)",
		labDir, strings.Join(o.Regions, ", "), o.Real, o.Emulated)
	var rules []faults.Rule
	for _, region := range o.Regions {
		rules = append(rules, r.plans[region].faults.Rules()...)
	}
	first := r.plans[o.Regions[0]]
	l, err := lab.Start(ctx, lab.Options{
		Dir: labDir, Regions: o.Regions, Real: o.Real, Emulated: o.Emulated,
		Faults: faults.NewSet(rules...), NodeBinary: o.NodeBinary,
		// Every region's plan gives its real nodes the same versions.
		BaseVersion: TargetVersion, Versions: first.realVersions, UpgradeVersion: TargetVersion,
		Logger: r.log,
	})
	if err != nil {
		return fmt.Errorf("start lab: %w", err)
	}
	r.lab = l
	info := l.Info()
	for _, region := range o.Regions {
		ri := info.Regions[region]
		for _, n := range ri.RealNodes {
			r.res.Started = append(r.res.Started, n.PID)
		}
		for _, f := range ri.FailedNodes {
			r.say("   node %s did not start (%s); it is left out of the plan", f.Identity, f.Error)
			r.plans[region].drop(f.Identity)
		}
	}
	return nil
}

// startCluster starts the coordinator members and writes the credentials file.
func (r *runner) startCluster(ctx context.Context, sec secrets) error {
	o := r.o
	bin := filepath.Join(o.BinDir, CoordinatorName)
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("coordinator binary: %w (run make build)", err)
	}
	dir := filepath.Join(o.Dir, CoordinatorDirName)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("coordinator dir: %w", err)
	}
	r.say("== starting %d %s members (c1 bootstraps, the others join); data and logs in %s", o.Coordinators, CoordinatorName, dir)
	c, err := startCluster(ctx, coordinatorSpec(bin, dir, sec, o.Coordinators, o.StopGrace))
	if err != nil {
		return fmt.Errorf("start coordinators: %w", err)
	}
	r.cluster = c
	r.res.Started = append(r.res.Started, c.pids()...)
	r.res.Coordinators = c.URLs()
	for _, m := range c.Members() {
		r.say("   %s pid %d, api %s, raft %s", m.ID, m.PID(), m.API, m.Raft)
	}
	creds := filepath.Join(o.Dir, CredentialsName)
	if err := sec.write(creds, c.URLs()); err != nil {
		return err
	}
	r.say("   fresh admin and edge tokens in %s (mode 0600)", creds)
	return nil
}

// startEdges starts one cluster-mode edge per region and waits until each is ready.
func (r *runner) startEdges(ctx context.Context, sec secrets) error {
	o := r.o
	for _, region := range o.Regions {
		p := r.plans[region]
		ri := r.lab.Info().Regions[region]
		client := r.lab.Region(region).Clients()[0]
		logFile := filepath.Join(o.Dir, EdgeLogName(region))
		r.say("== starting %s for %s as %s (cluster mode, upgrades and PKI on) with %s; its log: %s", EdgeName, region, client.Identity, HelperName, logFile)
		file, err := edgefile.Write(r.lab, region, filepath.Join(o.BinDir, HelperName))
		if err != nil {
			return err
		}
		e, err := startEdge(edgeSpec{
			binDir: o.BinDir, config: file, region: region,
			client: client.Identity, clientConfig: client.Config,
			coordinators: r.cluster.URLs(), token: sec.edges[region].token,
			broker: ri.BrokerURL, ca: ri.CA, caKey: ri.CAKey,
			deferRE: p.deferRE, shutRE: p.shutdownRE, workers: o.Workers, upgrade: TargetVersion,
			logFile: logFile, stopWait: o.StopGrace,
		})
		if err != nil {
			return err
		}
		r.edges = append(r.edges, e)
		r.res.Started = append(r.res.Started, e.PID())
		r.res.MonitorURLs[region] = e.Monitor
	}
	for _, e := range r.edges {
		readyCtx, cancel := context.WithTimeout(ctx, edgeReadyTimeout)
		err := e.WaitReady(readyCtx)
		cancel()
		if err != nil {
			return fmt.Errorf("edge %s: %w (log: %s)", e.region, err, logTail(e.LogPath))
		}
	}
	return nil
}

// reading is one look at everything: the edges' metrics, the cluster's status, the action log.
type reading struct {
	frame
	rep    audit.Report
	repErr error
}

// read scrapes every edge and the cluster and reads the action log; a part that failed keeps
// the previous reading's value (it is logged).
func (r *runner) read(ctx context.Context, scrapers map[string]*scraper, last reading) reading {
	out := reading{frame: frame{snaps: map[string]Snapshot{}, view: last.view}, rep: last.rep}
	for region, s := range scrapers {
		snap, err := s.scrape(ctx)
		if err != nil {
			r.log.Warn("scrape failed", "region", region, "error", err)
			snap = last.snaps[region]
		}
		out.snaps[region] = snap
	}
	out.view, out.viewErr = r.cluster.view(ctx)
	if out.viewErr != nil {
		r.log.Warn("coordinator status", "error", out.viewErr)
		out.view = last.view
	}
	rep, err := audit.FromFile(r.lab.ActionsFile())
	if err != nil {
		// A line being appended as we read; the next tick reads it whole.
		r.log.Warn("read action log", "error", err)
		out.repErr = err
	} else {
		out.rep = rep
	}
	return out
}

// follow scrapes the edges and the cluster and reads the action log until the plan is reached,
// the timeout passes, an edge dies or ctx ends; the summary reflects the last reading.
func (r *runner) follow(ctx context.Context, start time.Time) (Summary, error) {
	var sizes []regionSize
	scrapers := map[string]*scraper{}
	for i, region := range r.o.Regions {
		sizes = append(sizes, regionSize{name: region, nodes: len(r.plans[region].nodes)})
		scrapers[region] = &scraper{url: r.edges[i].Monitor + "/metrics", client: &http.Client{Timeout: 2 * time.Second}}
	}
	disp := newDisplay(r.o.Out, r.o.TTY, sizes, start)
	deadline := time.NewTimer(r.o.Timeout)
	defer deadline.Stop()
	tick := time.NewTicker(r.o.Scrape)
	defer tick.Stop()
	exited := r.anyEdgeExited()

	var cur reading
	var st status
	finish := func(done bool) Summary {
		disp.finish()
		return r.summarise(done, start, cur, st)
	}
	for {
		select {
		case <-ctx.Done():
			return finish(false), fmt.Errorf("interrupted before done: %w", context.Cause(ctx))
		case e := <-exited:
			return finish(false), fmt.Errorf("edge %s exited: %v (log: %s)", e.region, e.ExitErr(), logTail(e.LogPath))
		case <-deadline.C:
			return finish(false), nil
		case <-tick.C:
		}
		cur = r.read(ctx, scrapers, cur)
		disp.update(cur.frame)
		if cur.repErr != nil || cur.viewErr != nil {
			continue
		}
		st = r.evaluate(cur)
		if st.done() {
			return finish(true), nil
		}
	}
}

// evaluate judges every region: the action log and its edge against its plan, and its ledger.
func (r *runner) evaluate(cur reading) status {
	all := status{Met: map[Expect]int{}}
	for _, region := range r.o.Regions {
		p := r.plans[region]
		st := p.evaluate(cur.rep, cur.snaps[region])
		for e, n := range st.Met {
			all.Met[e] += n
		}
		missing, unexpected := p.evaluateLedger(cur.view.Regions[region])
		for _, m := range append(st.Missing[:len(st.Missing):len(st.Missing)], missing...) {
			all.Missing = append(all.Missing, region+": "+m)
		}
		for _, u := range append(st.Unexpected[:len(st.Unexpected):len(st.Unexpected)], unexpected...) {
			all.Unexpected = append(all.Unexpected, region+": "+u)
		}
	}
	return all
}

// summarise builds the summary of the last reading and evaluation of a run started at start.
func (r *runner) summarise(done bool, start time.Time, cur reading, st status) Summary {
	sum := Summary{Done: done, Elapsed: time.Since(start), Planned: map[Expect]int{}, Outcomes: map[string]int64{},
		Met: st.Met, Missing: st.Missing, Unexpected: st.Unexpected, Report: cur.rep, Cluster: cur.view}
	var healthy []time.Time
	for _, region := range r.o.Regions {
		p := r.plans[region]
		sum.Nodes += len(p.nodes)
		healthy = append(healthy, p.healthyDone(cur.rep)...)
		for _, e := range expectations() {
			sum.Planned[e] += p.count(e)
		}
		snap := cur.snaps[region]
		for k, v := range snap.Outcomes {
			sum.Outcomes[k] += v
		}
		sum.Regions = append(sum.Regions, RegionSummary{Name: region, Nodes: len(p.nodes), Succeed: p.succeed(),
			Ledger: cur.view.Regions[region], Edge: snap})
	}
	sum.Healthy = paceOf(start, healthy)
	return sum
}

// anyEdgeExited delivers the first edge that exits.
func (r *runner) anyEdgeExited() <-chan *edgeProc {
	ch := make(chan *edgeProc, len(r.edges))
	for _, e := range r.edges {
		go func() {
			<-e.Exited()
			ch <- e
		}()
	}
	return ch
}

// stop ends the edges (SIGTERM, then SIGKILL), then the coordinators, then the lab, and looks
// for survivors.
func (r *runner) stop() error {
	var errs []error
	if len(r.edges) > 0 || r.cluster != nil || r.lab != nil {
		r.say("== stopping")
	}
	for _, e := range r.edges {
		if err := e.Stop(e.grace); err != nil {
			errs = append(errs, err)
		}
	}
	if r.cluster != nil {
		if err := r.cluster.Stop(); err != nil {
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
	} else if len(r.res.Started) > 0 || r.lab != nil {
		r.say("   stopped %d processes started by this run (edges, coordinators, real nodes) and the lab; none is left", len(r.res.Started))
	}
	return errors.Join(errs...)
}
