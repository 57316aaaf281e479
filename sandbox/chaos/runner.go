// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/fleet/recorder"
	"github.com/seed96588659/muster/sandbox/stack/previous"
	"github.com/seed96588659/muster/sandbox/stack/wan"
)

// Options configure a chaos run; start from DefaultOptions.
type Options struct {
	// Dir is the work directory (binaries, lab, logs); kept when a check fails.
	Dir string
	// Rounds to run; each provisions every node of the lab once.
	Rounds int
	// Seed drives every random choice; the run prints it first.
	Seed uint64
	// Regions of the lab; the first gets two edges, the others one. Default eu, us.
	Regions []string
	// Emulated nodes per region, reprovisioned every round; default 300.
	Emulated int
	// Real node processes per region, provisioned in round 1 only (a provisioned real node
	// leaves provisioning mode for good); default none (muster-sandbox chaos: 1).
	Real int
	// NodeBinary is the muster-sandbox binary real nodes run; required when Real > 0.
	NodeBinary string
	// Kinds the rounds draw faults from; default AllKinds. Round i <= len(Kinds) injects
	// Kinds[i-1] alone, later rounds mix 2 or 3.
	Kinds []Kind
	// Plan overrides the faults of each round when set; a nil round draws a mix from the seed.
	Plan [][]Kind
	// Root is the repository root (for building); found from the working directory when empty.
	Root string
	// BinDir holds prebuilt muster-coordinator (with the failpoints tag), muster-edge and
	// muster-helper-sample; empty builds them into Dir/bin.
	BinDir string
	// PreviousBinDir holds muster-coordinator (with the failpoints tag) and muster-edge of
	// previous.Commit, the last commit at the cluster protocol before this build's; empty builds
	// them (cached across runs, sandbox/stack/previous) when rolling-upgrade or member-downgrade
	// may be drawn. A run that may draw rolling-upgrade starts on them.
	PreviousBinDir string
	// ReprovisionAfter is the coordinators' lease.reprovision_after: a node finished this
	// recently and seen again in provisioning mode (a discovery racing its restart) is not
	// queued again. Rounds start this long after the previous one finished. Default 4s, above
	// the emulated nodes' restart delay at time scale 0.1.
	ReprovisionAfter time.Duration
	// Lease timing of the coordinators and edges: default a 6s TTL, 1s grace, a long poll of a
	// third of the TTL (at most that) and a 1s margin.
	LeaseTTL, LeaseGrace, MaxWait, LeaseMargin time.Duration
	// KeepGoing runs the remaining rounds after one failed its checks (the run still fails).
	KeepGoing bool
	// Profile places the members and edges in datacenters (sandbox/stack/wan): lan (default),
	// 3dc or far-region; the proxies between them add the round trips.
	Profile wan.Profile
	// RoundTimeout bounds one round; default 2 minutes (a round takes seconds when nothing is stuck).
	RoundTimeout time.Duration
	// Out receives progress lines and the summary table; the default discards them.
	Out io.Writer
	// Logger receives the lab's own messages; the default discards them.
	Logger *slog.Logger
}

// DefaultOptions returns the options every run starts from; Dir and Rounds have no default.
func DefaultOptions() Options {
	return Options{
		Regions: []string{"eu", "us"}, Emulated: 300, Kinds: AllKinds, Profile: wan.LAN,
		ReprovisionAfter: 4 * time.Second,
		LeaseTTL:         6 * time.Second, LeaseGrace: time.Second, MaxWait: 2 * time.Second, LeaseMargin: time.Second,
		RoundTimeout: 2 * time.Minute, Out: io.Discard, Logger: slog.New(slog.DiscardHandler),
	}
}

// Validate refuses a run that cannot start, naming the field.
func (o Options) Validate() error {
	switch {
	case o.Dir == "":
		return errors.New("chaos: Dir is required")
	case o.Rounds < 1:
		return fmt.Errorf("chaos: rounds %d, want at least 1", o.Rounds)
	case len(o.Regions) == 0:
		return errors.New("chaos: Regions is empty")
	case len(o.Kinds) == 0:
		return errors.New("chaos: Kinds is empty")
	case o.Emulated < 1:
		return fmt.Errorf("chaos: Emulated is %d, want at least 1", o.Emulated)
	case o.Real < 0:
		return fmt.Errorf("chaos: Real is %d, want 0 or more", o.Real)
	case o.Real > 0 && o.NodeBinary == "":
		return errors.New("chaos: NodeBinary is required for real nodes")
	case o.MaxWait <= 0 || o.MaxWait > o.LeaseTTL/3:
		// The coordinators refuse a long poll that leaves an edge less than 2/3 of its lease.
		return fmt.Errorf("chaos: MaxWait is %s, want a positive duration of at most a third of LeaseTTL (%s)", o.MaxWait, o.LeaseTTL/3)
	case o.Profile != wan.LAN && o.Profile != wan.ThreeDC && o.Profile != wan.FarRegion:
		_, err := wan.Parse(string(o.Profile))
		return fmt.Errorf("chaos: %w", err)
	case o.Out == nil || o.Logger == nil:
		return errors.New("chaos: Out and Logger are required (io.Discard, slog.DiscardHandler)")
	}
	for _, d := range []struct {
		field string
		v     time.Duration
	}{
		{"LeaseTTL", o.LeaseTTL}, {"LeaseGrace", o.LeaseGrace}, {"LeaseMargin", o.LeaseMargin},
		{"ReprovisionAfter", o.ReprovisionAfter}, {"RoundTimeout", o.RoundTimeout},
	} {
		if d.v <= 0 {
			return fmt.Errorf("chaos: %s is %s, want a positive duration", d.field, d.v)
		}
	}
	return nil
}

// Runner holds one chaos run's processes.
type Runner struct {
	opts    Options
	rng     *mrand.Rand
	lab     *lab.Lab
	cluster *Cluster
	edges   []*Edge
	edgeAPI *api.Client // a probe with the edge token, for the ledger's time
	out     io.Writer
	outMu   sync.Mutex
	// lastDone is when the previous round's nodes were all provisioned.
	lastDone time.Time
	// calls are the edges' call histories; prevSeed is when the previous round's ledger read began.
	calls    *callLog
	prevSeed int64
	// bins are the current and the previous builds' directories; onPrevious says the members
	// still run the previous build (until the first rolling-upgrade).
	bins       builds
	onPrevious bool
}

// builds are the directories of the binaries a run starts processes from.
type builds struct {
	current  string // muster-coordinator, muster-edge, muster-helper-sample of this tree
	previous string // muster-coordinator and muster-edge of previous.Commit; "" when not needed
}

// RoundResult is what one round did and what the checker found.
type RoundResult struct {
	Round   int
	Kinds   []Kind
	Nodes   int
	Started time.Time
	// StartOffset is ledger time minus this machine's clock when the round began.
	StartOffset time.Duration
	Done        time.Duration // from the round's start to every node provisioned
	Events      []*Event
	Stalls      []time.Duration // provisioning stall after each leader SIGKILL
	Check       Check
	TimedOut    bool
}

// Run starts everything, runs the rounds and prints the summary table. The error is nil only
// when every round passed every check.
func Run(ctx context.Context, opts Options) (Summary, error) {
	if err := opts.Validate(); err != nil {
		return Summary{}, err
	}
	if opts.Seed == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		for _, x := range b {
			opts.Seed = opts.Seed<<8 | uint64(x)
		}
	}
	r := &Runner{opts: opts, rng: mrand.New(mrand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)), out: opts.Out, calls: newCallLog()}
	r.printf("chaos: seed %d (rerun with SEED=%d), %d rounds, dir %s\n", opts.Seed, opts.Seed, opts.Rounds, opts.Dir)
	sum := Summary{Seed: opts.Seed, Dir: opts.Dir}
	defer r.stop()
	if err := r.start(ctx); err != nil {
		return sum, fmt.Errorf("chaos (seed %d): start: %w", opts.Seed, err)
	}
	var failed error
	var failedRounds []int
	for i := 1; i <= opts.Rounds; i++ {
		res, err := r.round(ctx, i)
		sum.Rounds = append(sum.Rounds, res)
		if err != nil {
			failed = fmt.Errorf("chaos (seed %d): round %d: %w", opts.Seed, i, err)
			r.printf("%v\n", failed)
			break
		}
		if !res.Check.OK() || res.TimedOut {
			failedRounds = append(failedRounds, i)
			failed = fmt.Errorf("chaos (seed %d): rounds %v failed their checks; lab directory kept: %s", opts.Seed, failedRounds, opts.Dir)
			r.printf("%s\nchaos (seed %d): round %d failed its checks\n", res.Check.Evidence(), opts.Seed, i)
			if !opts.KeepGoing {
				break
			}
		}
	}
	sum.Print(r.out)
	if failed != nil {
		r.printf("seed %d; evidence above; lab directory kept: %s\n", opts.Seed, opts.Dir)
	}
	return sum, failed
}

func (r *Runner) printf(format string, args ...any) {
	r.outMu.Lock()
	defer r.outMu.Unlock()
	fmt.Fprintf(r.out, format, args...)
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (r *Runner) start(ctx context.Context) error {
	o := r.opts
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return err
	}
	if err := r.build(ctx); err != nil {
		return err
	}
	binDir := r.bins.current
	coordinatorBin := filepath.Join(binDir, "muster-coordinator")
	edgeBin := filepath.Join(binDir, "muster-edge")
	if r.onPrevious = r.startsOnPrevious(); r.onPrevious {
		coordinatorBin, edgeBin = filepath.Join(r.bins.previous, previous.Coordinator), filepath.Join(r.bins.previous, previous.Edge)
		r.printf("members and edges start on the previous build (%s) until the first rolling-upgrade\n", previous.Commit[:12])
	}
	t := time.Now()
	l, err := lab.Start(ctx, lab.Options{
		Dir: filepath.Join(o.Dir, "lab"), Regions: o.Regions, Real: o.Real, Emulated: o.Emulated,
		NodeBinary: o.NodeBinary, EmulatedTimeScale: 0.1, Logger: o.Logger,
	})
	if err != nil {
		return err
	}
	r.lab = l
	for _, reg := range l.Regions() {
		if f := reg.Failed(); len(f) > 0 {
			return fmt.Errorf("region %s: nodes failed to start: %v", reg.Name(), f)
		}
	}
	edgeToken, adminToken := randomToken(), randomToken()
	r.cluster, err = StartCluster(ctx, ClusterSpec{
		Bin: coordinatorBin, Dir: filepath.Join(o.Dir, "coordinators"), Members: 3,
		LeaseTTL: o.LeaseTTL, LeaseGrace: o.LeaseGrace, MaxWait: o.MaxWait, ReprovisionAfter: o.ReprovisionAfter,
		EdgeToken: edgeToken, AdminToken: adminToken, Profile: o.Profile,
	})
	if err != nil {
		return err
	}
	// For an operator's look at a kept directory: `muster-coordinator status --addr ...`.
	if err := os.WriteFile(filepath.Join(o.Dir, "coordinators", "admin.token"), []byte(adminToken+"\n"), 0o600); err != nil {
		return err
	}
	var urls []string
	for _, m := range r.cluster.Members {
		urls = append(urls, m.API)
	}
	if r.edgeAPI, err = api.NewClient(urls, api.WithToken(edgeToken), api.WithRetryDelay(100*time.Millisecond)); err != nil {
		return err
	}
	spec := EdgeSpec{BinDir: binDir, Bin: edgeBin, Dir: filepath.Join(o.Dir, "edges"), EdgeToken: edgeToken,
		LeaseMargin: o.LeaseMargin, BatchSize: 50, Workers: 64}
	if err := os.MkdirAll(spec.Dir, 0o755); err != nil {
		return err
	}
	for i, reg := range o.Regions {
		n := 1
		if i == 0 {
			n = 2
		}
		for k := 1; k <= n; k++ {
			e, err := NewEdge(spec, l, r.cluster, reg, k, o.Profile.EdgeSite(len(r.edges)))
			if err != nil {
				return err
			}
			r.edges = append(r.edges, e)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(r.edges))
	for i, e := range r.edges {
		wg.Go(func() { errs[i] = e.Start(ctx) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	r.printf("up in %s: lab %v (%d real + %d emulated per region), 3 coordinators, %d edges, profile %s\n",
		time.Since(t).Round(time.Millisecond), o.Regions, o.Real, o.Emulated, len(r.edges), o.Profile)
	return nil
}

// build finds or builds the binaries the run needs: this tree's, and the previous build's when
// a fault that needs it may be drawn.
func (r *Runner) build(ctx context.Context) error {
	o := r.opts
	r.bins.current = o.BinDir
	needPrevious := (r.mayDraw(RollingUpgrade) || r.mayDraw(MemberDowngrade)) && o.PreviousBinDir == ""
	root := o.Root
	if root == "" && (r.bins.current == "" || needPrevious) {
		wd, _ := os.Getwd()
		var err error
		if root, err = RepoRoot(wd); err != nil {
			return err
		}
	}
	if r.bins.current == "" {
		r.bins.current = filepath.Join(o.Dir, "bin")
		t := time.Now()
		if err := Build(ctx, root, r.bins.current); err != nil {
			return err
		}
		r.printf("built muster-coordinator (-tags %s), muster-edge, muster-helper-sample in %s\n", FailpointsTag, time.Since(t).Round(time.Millisecond))
	}
	r.bins.previous = o.PreviousBinDir
	if needPrevious {
		t := time.Now()
		dir, err := previous.Build(ctx, root, previous.CacheDir(), FailpointsTag)
		if err != nil {
			return err
		}
		r.bins.previous = dir
		r.printf("previous build (%s, -tags %s) in %s: %s\n", previous.Commit[:12], FailpointsTag, time.Since(t).Round(time.Millisecond), dir)
	}
	return nil
}

// mayDraw reports whether a round of the run may inject k: a planned round names it, or a
// drawn round may draw it.
func (r *Runner) mayDraw(k Kind) bool {
	drawn := len(r.opts.Plan) == 0
	for _, p := range r.opts.Plan {
		if p == nil {
			drawn = true
		}
		if slices.Contains(p, k) {
			return true
		}
	}
	return drawn && slices.Contains(r.opts.Kinds, k)
}

// startsOnPrevious reports whether the run starts on the previous build: a planned round names
// rolling-upgrade, or (no plan) the kinds hold it, which makes it round 1's fault. A mix of a
// plan's drawn round that draws it finds the cluster on this build (see rollingUpgrade).
func (r *Runner) startsOnPrevious() bool {
	if len(r.opts.Plan) == 0 {
		return slices.Contains(r.opts.Kinds, RollingUpgrade)
	}
	return slices.ContainsFunc(r.opts.Plan, func(p []Kind) bool { return slices.Contains(p, RollingUpgrade) })
}

func (r *Runner) stop() {
	var wg sync.WaitGroup
	for _, e := range r.edges {
		wg.Go(func() { e.Close() })
	}
	wg.Wait()
	if r.cluster != nil {
		r.cluster.Stop()
	}
	if r.lab != nil {
		_ = r.lab.Stop()
	}
}

// plan is the faults of round i.
func (r *Runner) plan(i int) []Kind {
	ks := r.opts.Kinds
	if len(r.opts.Plan) > 0 {
		if p := r.opts.Plan[(i-1)%len(r.opts.Plan)]; p != nil {
			return p
		}
	} else if i <= len(ks) {
		return []Kind{singleOrder(ks)[i-1]}
	}
	n := 2 + r.rng.IntN(2)
	perm := r.rng.Perm(len(ks))
	var out []Kind
	for _, p := range perm[:min(n, len(ks))] {
		out = append(out, ks[p])
	}
	return out
}

// singleOrder is the order of the single-fault rounds: ks, with rolling-upgrade first, so a run
// that starts on the previous build leaves it in round 1.
func singleOrder(ks []Kind) []Kind {
	out := make([]Kind, 0, len(ks))
	if slices.Contains(ks, RollingUpgrade) {
		out = append(out, RollingUpgrade)
	}
	for _, k := range ks {
		if k != RollingUpgrade {
			out = append(out, k)
		}
	}
	return out
}

// roundNodes are the nodes a round provisions: every emulated node, and the real ones in round 1.
func (r *Runner) roundNodes(i int) map[string]string {
	out := map[string]string{}
	for _, reg := range r.lab.Regions() {
		for _, id := range reg.EmulatedNodes() {
			out[id] = reg.Name()
		}
		if i == 1 {
			for _, id := range reg.RealNodes() {
				out[id] = reg.Name()
			}
		}
	}
	return out
}

// progress is the fraction of the round's emulated nodes the fleets have accepted a configure
// from. Not the restarted count: that trails configure by the restart splay, so a fault timed
// on it can land after the last call of the round and hold nothing back.
func (r *Runner) progress(base map[string]int64, total int) float64 {
	var n int64
	for _, reg := range r.lab.Regions() {
		n += reg.Fleet().Stats().Configured - base[reg.Name()]
	}
	if total == 0 {
		return 1
	}
	return float64(n) / float64(total)
}

func (r *Runner) round(ctx context.Context, i int) (*RoundResult, error) {
	kinds := r.plan(i)
	nodes := r.roundNodes(i)
	res := &RoundResult{Round: i, Kinds: kinds, Nodes: len(nodes)}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, r.opts.RoundTimeout)
	defer cancel()

	base := map[string]int64{}
	emulated := 0
	for _, reg := range r.lab.Regions() {
		base[reg.Name()] = reg.Fleet().Stats().Configured
		emulated += len(reg.EmulatedNodes())
	}
	// Nodes finished under the reprovision guard would not be queued again: wait it out.
	sleepCtx(ctx, time.Until(r.lastDone.Add(r.opts.ReprovisionAfter+500*time.Millisecond)))
	res.StartOffset = r.ledgerOffset(ctx)
	seed := r.readSeed(ctx)
	res.Started = time.Now()
	if i > 1 {
		for _, reg := range r.lab.Regions() {
			for _, id := range reg.EmulatedNodes() {
				if err := reg.Fleet().Reprovision(id); err != nil {
					return res, err
				}
			}
		}
	}

	// Each fault waits for its moment in the batch, then runs to its end.
	in := &injector{r: r, busy: map[*Edge]bool{}}
	var wg sync.WaitGroup
	for j, k := range kinds {
		ev := &Event{Round: i, Kind: k, seq: j}
		res.Events = append(res.Events, ev)
		at := 0.1 + 0.4*r.rng.Float64()
		seed := r.rng.Uint64()
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := mrand.New(mrand.NewPCG(seed, uint64(i)))
			_ = waitFor(ctx, "mid-batch", r.opts.RoundTimeout, func() (bool, string) {
				return r.progress(base, emulated) >= at, ""
			})
			if coordinatorFault(k) {
				in.coord.Lock()
				defer in.coord.Unlock()
			}
			ev.Progress = r.progress(base, emulated)
			in.inject(ctx, ev, rng)
			ev.LedgerOffset = r.ledgerOffset(ctx)
			r.printf("  %s\n", ev)
		}()
	}
	r.printf("round %d: %d nodes, faults %s\n", i, len(nodes), joinKinds(kinds))
	// Ledger times are not this machine's: the ledger's clock lags a wall clock after the whole
	// cluster was down (a cluster restart) and never follows a stepped one.
	since := res.Started.Add(res.StartOffset)
	doneErr := r.waitProvisioned(ctx, since, nodes)
	res.Done = time.Since(res.Started)
	wg.Wait()
	if doneErr != nil {
		res.TimedOut = true
		// Nothing converged: still check what is there, for the evidence.
		r.printf("round %d: not every node provisioned: %v\n", i, doneErr)
	}
	// The round is done when the last fault is undone too: wait for the fleet again (a fault
	// that began late may have held work back).
	if doneErr == nil {
		if err := r.waitProvisioned(ctx, since, nodes); err != nil {
			res.TimedOut = true
			r.printf("round %d: not every node provisioned after the faults: %v\n", i, err)
		}
		res.Done = max(res.Done, time.Since(res.Started))
	}
	// The checks get their own time: a round that ran out of its own must still be judged.
	cctx, ccancel := context.WithTimeout(parent, 2*time.Minute)
	defer ccancel()
	r.lastDone = time.Now()
	// The edges' calls, read once: the stale check dates their grants, porcupine checks them.
	readErr := r.readCalls()
	res.Check = r.check(cctx, res, nodes)
	res.Check.Lin = r.checkHistory(res, seed, readErr)
	if all, err := recorder.ReadFile(r.lab.ActionsFile()); err == nil {
		res.Stalls = stalls(res, all)
		if ev := r.stallEvidence(cctx, res, all, 1500*time.Millisecond); ev != "" {
			r.printf("%s", ev)
		}
	}
	r.printf("round %d: %s in %s%s\n", i, res.Check.Summary(), res.Done.Round(time.Millisecond), stallText(res.Stalls))
	return res, nil
}

func stallText(s []time.Duration) string {
	if len(s) == 0 {
		return ""
	}
	var parts []string
	for _, d := range s {
		parts = append(parts, d.Round(time.Millisecond).String())
	}
	return fmt.Sprintf("; stall after leader SIGKILL %v", parts)
}

// waitProvisioned waits until the fleet reports every round node provisioned and the ledger
// holds each as provisioned, finished after since (the round's start in ledger time).
func (r *Runner) waitProvisioned(ctx context.Context, since time.Time, nodes map[string]string) error {
	return waitFor(ctx, "every node provisioned", r.opts.RoundTimeout, func() (bool, string) {
		missing := 0
		for id, reg := range nodes {
			if !r.fleetProvisioned(reg, id) {
				missing++
			}
		}
		if missing > 0 {
			return false, fmt.Sprintf("%d nodes not provisioned by the fleet's record", missing)
		}
		ledger, err := r.ledgerNodes(ctx)
		if err != nil {
			return false, err.Error()
		}
		for id := range nodes {
			n, ok := ledger[id]
			if !ok || n.State != api.StateProvisioned || n.FinishedAt.Before(since.Add(-time.Second)) {
				missing++
			}
		}
		return missing == 0, fmt.Sprintf("%d nodes not provisioned in the ledger", missing)
	})
}

// fleetProvisioned is the node's own record: an emulated node's mode, a real node's status.
func (r *Runner) fleetProvisioned(region, id string) bool {
	reg := r.lab.Region(region)
	if st, ok := reg.Fleet().State(id); ok {
		return st.Mode == "provisioned"
	}
	st, err := reg.NodeStatus(id)
	return err == nil && !st.Provisioning && st.Connected
}

// ledgerNodes lists every node of every region from the leader's ledger.
func (r *Runner) ledgerNodes(ctx context.Context) (map[string]api.Node, error) {
	out := map[string]api.Node{}
	for _, reg := range r.opts.Regions {
		after := ""
		for {
			page, err := r.ledgerPage(ctx, api.NodeFilter{Region: reg, After: after, Limit: 1000})
			if err != nil {
				return nil, fmt.Errorf("ledger nodes of %s: %w", reg, err)
			}
			for _, n := range page.Nodes {
				out[n.Identity] = n
			}
			if page.Next == "" {
				break
			}
			after = page.Next
		}
	}
	return out, nil
}

// ledgerPage reads one page of the ledger. A fault (a whole-cluster restart, say) may leave the
// cluster without a leader for longer than the client's retries last on a loaded machine: the
// check then waits for one, as an operator would, instead of failing the round on its own read.
func (r *Runner) ledgerPage(ctx context.Context, f api.NodeFilter) (api.NodesResponse, error) {
	const tries = 3
	var err error
	for try := 1; ; try++ {
		qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		var page api.NodesResponse
		page, err = r.cluster.Admin().Nodes(qctx, f)
		cancel()
		if err == nil || try == tries || ctx.Err() != nil {
			return page, err
		}
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		_, werr := r.cluster.WaitLeader(wctx, len(r.cluster.Members), "")
		cancel()
		if werr != nil {
			return page, fmt.Errorf("%w (then no leader within a minute: %v)", err, werr)
		}
	}
}

// ledgerOffset is the leader's ledger time minus this machine's clock, from a heartbeat.
func (r *Runner) ledgerOffset(ctx context.Context) time.Duration {
	// As NTP does: of several probes, the one with the shortest round trip bounds the error
	// best (half its round trip). One probe answered after a retry to another member (a leader
	// change under way) was off by hundreds of milliseconds, enough to misdate a grant against
	// the node's record of the call it allowed.
	best, bestRTT := time.Duration(0), time.Duration(-1)
	for i := 0; i < 8 && (bestRTT < 0 || bestRTT > 5*time.Millisecond); i++ {
		hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		before := time.Now()
		hb, err := r.edgeAPI.Heartbeat(hctx, api.HeartbeatRequest{Edge: "chaos-probe", Region: r.opts.Regions[0]})
		rtt := time.Since(before)
		cancel()
		if err != nil {
			continue
		}
		if bestRTT < 0 || rtt < bestRTT {
			best, bestRTT = hb.Time.Sub(before.Add(rtt/2)), rtt
		}
	}
	return best
}
