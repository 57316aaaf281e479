// SPDX-License-Identifier: Apache-2.0

package regionbench

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/pkg/testkit/proxy"
	"github.com/seed96588659/muster/sandbox/chaos"
	"github.com/seed96588659/muster/sandbox/fleet/audit"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/internal/procstat"
	"github.com/seed96588659/muster/sandbox/labkit"
	"github.com/seed96588659/muster/sandbox/stack/wan"
)

const (
	regions    = 10
	workers    = 64 // each edge's
	edgeToken  = "regionbench-edge-token-0123456789"
	adminToken = "regionbench-admin-token-0123456789"
	// profileSeconds is how long the members' CPU profiles run, from a quarter into the run.
	profileSeconds = 20
)

// nodesPerRegion is MUSTER_BENCH_NODES, 10,000 by default.
func nodesPerRegion(b *testing.B) int {
	v := os.Getenv("MUSTER_BENCH_NODES")
	if v == "" {
		return 10_000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("MUSTER_BENCH_NODES=%q: want a positive number of nodes per region", v)
	}
	return n
}

// BenchmarkTenRegions provisions ten regions three times (package doc): ten standalone edges,
// the 3dc cluster, the 3dc cluster with a leader SIGKILL halfway. MUSTER_BENCH_PAIRS runs the
// first two that many times, alternated, and reports the pair of the median ratio.
func BenchmarkTenRegions(b *testing.B) {
	n := nodesPerRegion(b)
	total := regions * n
	place, err := placementFromEnv()
	if err != nil {
		b.Fatal(err)
	}
	if err := place.placeFleet(); err != nil {
		b.Fatal(err)
	}
	pairs, err := pairsFromEnv()
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("placement %s", place)
	for range b.N {
		alone, cluster := medianPair(b, pairs, func(i int) (result, result) {
			return provision(b, n, mode{name: "standalone", place: place}),
				provision(b, n, mode{name: "cluster", place: place, cluster: true, profile: i == 0})
		}, total)
		killed := provision(b, n, mode{name: "killed", place: place, cluster: true, kill: true})

		rate := func(d time.Duration) float64 { return float64(total) / d.Minutes() }
		b.ReportMetric(rate(alone.took), "standalone-nodes/min")
		b.ReportMetric(rate(cluster.took), "cluster-nodes/min")
		b.ReportMetric(alone.took.Seconds()/cluster.took.Seconds(), "cluster/standalone")
		b.ReportMetric(alone.busy, "standalone-busy")
		b.ReportMetric(cluster.busy, "cluster-busy")
		b.ReportMetric(ms(cluster.coordCPU)/float64(total), "coord-cpu-ms/node")
		b.ReportMetric(ms(cluster.leaderCPU)/float64(total), "leader-cpu-ms/node")
		// What the fleet side spends per node in each run: the cluster run's extra is what its
		// edges pay for the coordinators (calls, journal), and it slows the host flows they share
		// the lab's CPU with.
		b.ReportMetric(ms(alone.fleetCPU)/float64(total), "standalone-fleet-cpu-ms/node")
		b.ReportMetric(ms(cluster.fleetCPU)/float64(total), "cluster-fleet-cpu-ms/node")
		b.ReportMetric(float64(cluster.leaderRSS)/(1<<20), "leader-rss-MB")
		grants, reports := cluster.calls.Grants(), cluster.calls.Reports()
		// The workers' pace: busy near 1 with a slower flow is the fleet side, not the cluster.
		testkit.ReportLatency(b, "standalone-flow", alone.flows)
		testkit.ReportLatency(b, "cluster-flow", cluster.flows)
		b.ReportMetric(ms(cluster.journal), "cluster-journal-mean-ms")
		testkit.ReportLatency(b, "grant", grants)
		testkit.ReportLatency(b, "report", reports)
		// How many calls a node costs the coordinators: each grant and report is a Raft entry.
		b.ReportMetric(float64(total)/float64(max(len(grants), 1)), "nodes/grant")
		b.ReportMetric(float64(total)/float64(max(len(reports), 1)), "nodes/report")
		var entries uint64
		for kind, n := range cluster.log.entries {
			entries += n
			b.Logf("log entries, %s: %d (%.1f per 1,000 nodes)", kind, n, 1000*float64(n)/float64(total))
		}
		b.ReportMetric(1000*float64(entries)/float64(total), "entries/1000-nodes")
		b.ReportMetric(1000*float64(cluster.log.commits)/float64(total), "ledger-commits/1000-nodes")
		b.ReportMetric(rate(killed.took), "killed-nodes/min")
		b.ReportMetric(killed.stall.Seconds(), "kill-stall-s")
		b.ReportMetric(float64(alone.double+cluster.double+killed.double), "double")
		b.ReportMetric(float64(cluster.gone+killed.gone), "gone")
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// pairsFromEnv is MUSTER_BENCH_PAIRS, 1 by default.
func pairsFromEnv() (int, error) {
	v := os.Getenv("MUSTER_BENCH_PAIRS")
	if v == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("MUSTER_BENCH_PAIRS=%q: want a positive number of standalone and cluster runs", v)
	}
	return n, nil
}

// medianPair runs pairs standalone and cluster runs, alternated, and returns the pair whose
// cluster/standalone ratio is the median. This machine's CPU time per unit of work drifts by
// tens of percent over minutes (the same standalone run read 0.58 to 1.01 ms of the fleet's CPU
// per node within an hour), so one pair can land a ratio on either side of a goal; every pair's
// figures are logged.
func medianPair(b *testing.B, pairs int, run func(i int) (alone, cluster result), total int) (result, result) {
	type pair struct {
		alone, cluster result
		ratio          float64
	}
	all := make([]pair, pairs)
	for i := range all {
		a, c := run(i)
		all[i] = pair{a, c, a.took.Seconds() / c.took.Seconds()}
		b.Logf("pair %d: cluster/standalone %.3f, coordinators %.3f ms of CPU per node (leader %.3f), fleet %.3f standalone and %.3f cluster",
			i+1, all[i].ratio, ms(c.coordCPU)/float64(total), ms(c.leaderCPU)/float64(total), ms(a.fleetCPU)/float64(total), ms(c.fleetCPU)/float64(total))
	}
	slices.SortFunc(all, func(x, y pair) int { return cmp.Compare(x.ratio, y.ratio) })
	m := all[len(all)/2]
	return m.alone, m.cluster
}

// mode is one provisioning run's shape.
type mode struct {
	// name labels the run's goroutines in a profile of the benchmark (go test -cpuprofile;
	// go tool pprof -tagfocus run=cluster).
	name    string
	place   placement
	cluster bool
	// profile takes a CPU profile of every member during the run.
	profile bool
	// kill SIGKILLs the leader once half the fleet is provisioned.
	kill bool
}

// result is what one run measured.
type result struct {
	took                time.Duration
	coordCPU, leaderCPU time.Duration
	// fleetCPU is this process's CPU over the run: the lab's emulated servers and broker, the
	// edges and the links' latency; the persistent helpers' is not in it.
	fleetCPU  time.Duration
	leaderRSS int64
	calls     *labkit.Calls
	// flows is how long each provisioning host flow took.
	flows []time.Duration
	// journal is the edges' mean time to make an intent durable (0 standalone: no journal).
	journal time.Duration
	// log is what the run cost the leader's log and ledger (cluster runs only).
	log    leaderLog
	stall  time.Duration
	double int
	// gone counts nodes reported gone: provisioned under a lease lost before its result was
	// reported (the lab's log proves them provisioned).
	gone int64
	// busy is the share of the edges' workers running a host flow, on average between 10% and
	// 90% of the fleet provisioned: near 1, the edges never waited for the coordinators.
	busy float64
}

// provision runs ten edges (one per region) on a fresh lab of n nodes per region until every node
// is provisioned, then checks the lab's action log.
func provision(b *testing.B, n int, m mode) (res result) {
	pprof.Do(context.Background(), pprof.Labels("run", m.name), func(context.Context) { res = provisionRun(b, n, m) })
	return res
}

func provisionRun(b *testing.B, n int, m mode) result {
	b.StopTimer()
	defer b.StartTimer()
	dir := b.TempDir()
	names := make([]string, regions)
	for i := range names {
		names[i] = fmt.Sprintf("r%02d", i+1)
	}
	l, err := lab.Start(context.Background(), lab.Options{Dir: filepath.Join(dir, "lab"), Regions: names, Emulated: n, Clients: 1, ReleaseCache: "off"})
	if err != nil {
		b.Fatalf("start lab: %v", err)
	}
	defer l.Stop()

	res := result{calls: &labkit.Calls{}}
	var c *chaos.Cluster
	if m.cluster {
		c = startCluster(b, dir)
		defer c.Stop()
		if err := m.place.placeMembers(c); err != nil {
			b.Fatal(err)
		}
		defer func() {
			if b.Failed() {
				b.Logf("coordinator logs (tail):\n%s", c.Logs(4000))
			}
		}()
	}
	before := membersCPU(b, c)
	fleetBefore := testkit.SelfCPU(b) // the lab and the edges run in this process
	start := time.Now()
	edges := make([]*labkit.Edge, regions)
	// The edges stop before the cluster and the lab do, also when the run fails.
	defer func() {
		for _, e := range edges {
			if e != nil {
				e.Shutdown(b)
			}
		}
	}()
	for j, region := range names {
		edges[j] = startEdge(b, l, c, region, j, res.calls)
	}
	// A node is done once its edge reported it provisioned, or gone: a node whose restart went
	// out under a lease lost meanwhile (elections under load) is provisioned but read gone by
	// the next edge that holds it. Each node counts once: one provisioned under a lease whose
	// report was lost is read gone later, and counting both finished runs early. The lab's log
	// says which were provisioned, at the end.
	provisioned := func() int64 {
		var sum int64
		for _, e := range edges {
			sum += int64(e.Finished())
		}
		return sum
	}
	total := int64(regions * n)
	busy := sampleBusy(edges, total)
	defer busy.stop()
	var killedAt time.Time
	if m.kill {
		testkit.WaitFor(b, 30*time.Minute, "half the fleet provisioned", func() bool { return provisioned() >= total/2 })
		leader, err := c.WaitLeader(context.Background(), 3, "")
		if err != nil {
			b.Fatal(err)
		}
		killedAt = time.Now()
		if err := leader.Kill(); err != nil {
			b.Fatalf("SIGKILL %s: %v", leader.ID, err)
		}
	}
	var profile chan error
	if m.profile {
		profile = make(chan error, 1)
		go func() {
			// A quarter in: past the first registrations, into the steady grants and reports.
			for provisioned() < total/4 {
				time.Sleep(100 * time.Millisecond)
			}
			profile <- membersProfile(b, c)
		}()
	}
	testkit.WaitFor(b, 60*time.Minute, "every node provisioned", func() (bool, string) {
		got := provisioned()
		return got >= total, fmt.Sprintf("%d of %d provisioned", got, total)
	})
	res.took = time.Since(start)
	res.fleetCPU = testkit.SelfCPU(b) - fleetBefore
	res.busy = busy.stop()
	for _, e := range edges {
		res.gone += e.App.Edge.Stats().Outcomes[hostflow.Gone]
		res.flows = append(res.flows, e.FlowTimes()...)
	}
	if res.journal, err = journalMean(edges); err != nil {
		b.Fatal(err)
	}
	after := membersCPU(b, c)
	if c != nil {
		for id, u := range after {
			res.coordCPU += u.Self - before[id].Self
		}
		leader, err := c.WaitLeader(context.Background(), 3, "")
		if err != nil {
			b.Fatal(err)
		}
		res.leaderCPU = after[leader.ID].Self - before[leader.ID].Self
		res.leaderRSS = after[leader.ID].PeakRSS
		if !m.kill {
			if res.log, err = readLeaderLog(context.Background(), c); err != nil {
				b.Fatal(err)
			}
		}
	}
	if m.kill {
		// A small lab may have been leased whole before the kill: then no grant measures it.
		if g, ok := res.calls.FirstGrantSentAfter(killedAt); ok {
			res.stall = g.Sub(killedAt)
		} else {
			b.Logf("no lease was asked for after the leader's kill (the edges held every node left): no stall measured")
		}
	}
	if profile != nil {
		if err := <-profile; err != nil {
			b.Errorf("members' CPU profiles: %v", err)
		}
	}
	for _, e := range edges {
		e.Shutdown(b)
	}
	if err := l.Stop(); err != nil {
		b.Fatalf("stop lab: %v", err)
	}
	rep, err := audit.FromFile(l.ActionsFile())
	if err != nil {
		b.Fatal(err)
	}
	if int64(rep.Totals.Provisioned) < total || rep.Totals.DoubleProvisioned > 0 {
		b.Fatalf("the lab's log: %d of %d provisioned, %d double provisioned", rep.Totals.Provisioned, total, rep.Totals.DoubleProvisioned)
	}
	res.double = rep.Totals.DoubleProvisioned
	return res
}

// busySampler averages the edges' running host flows over the workers they have.
type busySampler struct {
	done   chan struct{}
	result chan float64
	once   sync.Once
	busy   float64
}

// sampleBusy samples every 100 ms until stop, counting only the samples taken between 10% and
// 90% of total provisioned (the start and the tail have too few nodes left to fill the workers).
func sampleBusy(edges []*labkit.Edge, total int64) *busySampler {
	s := &busySampler{done: make(chan struct{}), result: make(chan float64, 1)}
	go func() {
		var sum float64
		var n int
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-s.done:
				if n == 0 {
					s.result <- 0
				} else {
					s.result <- sum / float64(n)
				}
				return
			case <-tick.C:
			}
			var running, provisioned int64
			for _, e := range edges {
				st := e.App.Edge.Stats()
				running += st.InFlight
				provisioned += int64(e.Finished())
			}
			if provisioned*10 >= total && provisioned*10 <= 9*total {
				sum += float64(running) / float64(len(edges)*workers)
				n++
			}
		}
	}()
	return s
}

// stop ends the sampling and returns the average; later calls return it again.
func (s *busySampler) stop() float64 {
	s.once.Do(func() {
		close(s.done)
		s.busy = <-s.result
	})
	return s.busy
}

// startCluster starts three members with production durability, placed by the 3dc profile.
func startCluster(b *testing.B, dir string) *chaos.Cluster {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := chaos.StartCluster(ctx, chaos.ClusterSpec{
		Bin: bins.coordinator, Dir: filepath.Join(dir, "cluster"), Members: 3,
		EdgeToken: edgeToken, AdminToken: adminToken, Profile: wan.ThreeDC,
		Env: append([]string{"MUSTER_HTTP_PROFILING=true"}, strings.Fields(os.Getenv("MUSTER_BENCH_MEMBER_ENV"))...),
	})
	if err != nil {
		b.Fatalf("start coordinators: %v", err)
	}
	return c
}

// startEdge runs edge j of region, next to member j mod 3 as the 3dc profile places it; c nil
// runs it standalone.
func startEdge(b *testing.B, l *lab.Lab, c *chaos.Cluster, region string, j int, calls *labkit.Calls) *labkit.Edge {
	cfg := labkit.EdgeConfig(b, l, region, bins.helper)
	client := l.Region(region).Clients()[0]
	cfg.ChoriaConfig, cfg.ChoriaIdentity, cfg.EdgeName = client.Config, client.Identity, client.Identity
	cfg.StateDir = filepath.Join(filepath.Dir(l.InfoFile()), "edge-state", client.Identity)
	cfg.Workers, cfg.BatchSize, cfg.Interval, cfg.HelperPersistent = workers, 256, time.Minute, true
	cfg.Helper += " --persistent"
	ao := labkit.EdgeOptions(calls.Timed)
	if c != nil {
		site := wan.ThreeDC.EdgeSite(j)
		sites := map[string]int{}
		// Each edge lists the members' advertised addresses (their chaos proxies), as a deployment
		// does, and dials them through its own dialer, which holds each link for the round trip
		// between their places; a leader named by its own listener is placed the same.
		for i, m := range c.Members {
			site := wan.ThreeDC.MemberSite(i)
			sites[m.APIProxy.Addr()] = site
			sites[strings.TrimPrefix(m.API, "http://")] = site
			cfg.Coordinators = append(cfg.Coordinators, "http://"+m.APIProxy.Addr())
		}
		cfg.CoordinatorToken = edgeToken
		d := &proxy.Dialer{Name: client.Identity, Jitter: proxy.UniformJitter,
			Latency: func(addr string) proxy.Latency {
				base, jitter := wan.ThreeDC.OneWay(site, sites[addr])
				return proxy.Latency{Base: base, Jitter: jitter}
			}}
		b.Cleanup(func() { d.Close() })
		ao.CoordinatorHTTP = &http.Client{Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 64}}
	}
	if err := cfg.Validate(); err != nil {
		b.Fatalf("edge %s: %v", region, err)
	}
	return labkit.StartEdge(b, client.Identity, cfg, ao, slog.LevelWarn, 6<<10)
}

// membersCPU reads every running member's CPU and peak RSS; nil without a cluster.
func membersCPU(b *testing.B, c *chaos.Cluster) map[string]procstat.Usage {
	if c == nil {
		return nil
	}
	out := map[string]procstat.Usage{}
	for _, m := range c.Members {
		if !m.Running() {
			continue
		}
		u, err := procstat.Read(m.PID())
		if err != nil {
			b.Fatal(err)
		}
		out[m.ID] = u
	}
	return out
}

// membersProfile takes every running member's CPU profile for profileSeconds, at once. The
// leader's goes where MUSTER_BENCH_PROFILE names (default: muster-regionbench-leader-cpu.pprof in
// the temporary directory), a follower's beside it with its id in the name; the paths are logged.
func membersProfile(b *testing.B, c *chaos.Cluster) error {
	leader, err := c.WaitLeader(context.Background(), 3, "")
	if err != nil {
		return err
	}
	out := os.Getenv("MUSTER_BENCH_PROFILE")
	if out == "" {
		out = filepath.Join(os.TempDir(), "muster-regionbench-leader-cpu.pprof")
	}
	errs := make(chan error, len(c.Members))
	running := 0
	for _, m := range c.Members {
		if !m.Running() {
			continue
		}
		running++
		path, role := out, "leader"
		if m.ID != leader.ID {
			path, role = strings.TrimSuffix(out, ".pprof")+"-"+m.ID+".pprof", "follower"
		}
		go func() {
			err := memberProfile(m.API, path)
			if err == nil {
				b.Logf("the %s's (%s) CPU profile over %ds: %s (go tool pprof -top %s)", role, m.ID, profileSeconds, path, path)
			}
			errs <- err
		}()
	}
	var first error
	for range running {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// memberProfile writes the CPU profile of the member serving api to path.
func memberProfile(api, path string) error {
	url := strings.TrimRight(api, "/") + "/v1/admin/profile/cpu?seconds=" + strconv.Itoa(profileSeconds)
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.ReadFrom(resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
