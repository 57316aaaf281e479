// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/raftnode"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// BenchmarkClusterScale grows one ledger to 10,000, 100,000 and 1,000,000 nodes in 10 regions
// through the whole write path of a real one-member cluster on loopback (Service.Register: raft
// log with fsync, ledger apply with fsync; 1,000 nodes per request, as an edge sends them),
// and at each size measures on that member:
//   - grant+report: per op, one Service.Acquire of 1,000 nodes in each region and the
//     Service.Report of all of them as released (back to waiting, so the ledger keeps its size);
//     latency percentiles over the op's samples, and the process's resident memory after a GC
//     (the benchmark's own driver is a few MB of it);
//   - snapshot+join: per op, a raft snapshot on the leader (Service.Snapshot: the FSM's Snapshot
//     and Persist into raft's store), then a new member joining (Service.Join) and catching up:
//     raft installs that snapshot (the leader keeps too few trailing logs to replicate instead),
//     the member restores it into its ledger; timed until its applied index reaches the
//     leader's. It is removed again after.
//
// One member leads alone so that the bulk load is not limited by replication to followers that
// would also share this process's two cores; the joiner is the second raft member the snapshot
// travels to. The 1,000,000-node step takes minutes and ~2 GB of disk, so it runs only when the
// -bench pattern names "1M":
//
//	go test -run '^$' -bench 'BenchmarkClusterScale/(10k|100k|1M)/' -benchtime 5x -timeout 60m .
//
// (With -benchtime Nx, testing runs each sub-benchmark once with N=1, then with N; the figures
// are those of the N run.)
func BenchmarkClusterScale(b *testing.B) {
	sizes := []struct {
		name  string
		nodes int
	}{{"10k", 10_000}, {"100k", 100_000}, {"1M", 1_000_000}}
	pattern := ""
	if f := flag.Lookup("test.bench"); f != nil {
		pattern = f.Value.String()
	}
	s := startScaleLeader(b)
	loaded := 0
	for _, size := range sizes {
		if size.nodes >= 1_000_000 && !strings.Contains(pattern, size.name) {
			b.Logf("%s: skipped; name %s in -bench to run it", size.name, size.name)
			continue
		}
		start := time.Now()
		stop := sampleAnon()
		s.load(loaded, size.nodes)
		peak := stop()
		loaded = size.nodes
		b.Logf("%s: loaded through raft in %s; anonymous memory peaked at %.0f MB while loading", size.name, time.Since(start).Round(time.Millisecond), peak)
		b.Run(size.name+"/grant+report", func(b *testing.B) {
			s.cycles(b, b.N)
			reportMemory(b)
			reportMappedFiles(b)
			s.reportFiles(b)
		})
		b.Run(size.name+"/snapshot+join", func(b *testing.B) {
			var snaps, catchups []time.Duration
			for range b.N {
				sn, cu := s.snapshotAndJoin(b)
				snaps, catchups = append(snaps, sn), append(catchups, cu)
			}
			testkit.ReportLatency(b, "snapshot", snaps)
			testkit.ReportLatency(b, "catchup", catchups)
		})
	}
}

type scaleCluster struct {
	b      *testing.B
	root   string
	leader *coordinator.Service
	joins  int
	// seq numbers the acquire and report request ids.
	seq int
}

func scaleConfig(id, dir string, bootstrap bool) coordinator.Config {
	return coordinator.Config{
		ID: id, DataDir: dir, RaftBind: "127.0.0.1:0", APIAddress: "http://" + id + ".invalid",
		Bootstrap: bootstrap, Join: !bootstrap, Timeouts: raftnode.LoopbackTimeouts(),
		// Snapshots only when the benchmark takes one, and then a log too short to replicate
		// from: a joining member must be sent the snapshot.
		SnapshotThreshold: 1 << 40, SnapshotInterval: 24 * time.Hour, TrailingLogs: 8,
	}
}

func startScaleLeader(b *testing.B) *scaleCluster {
	b.Helper()
	s := &scaleCluster{b: b, root: b.TempDir()}
	svc, err := coordinator.New(scaleConfig("c1", filepath.Join(s.root, "c1"), true))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { svc.Close() })
	pollUntil(b, 5*time.Minute, "c1 to lead", svc.IsLeader)
	s.leader = svc
	return s
}

// scaleNodeID spreads one request's nodes over the identity space (the pessimistic layout: the
// nodes a grant takes together live on different pages of the ledger). It is a bijection of
// [0, 1,000,000), so every node is new.
func scaleNodeID(i int) string {
	return fmt.Sprintf("node-%07d.example.net", (i%1_000)*1_000+i/1_000)
}

// load registers nodes [from, to) in requests of 1,000 (an edge's discovery batch, edge/sweeping.go),
// rotating over 10 regions. (Requests of 10,000, one ledger command each, load as fast but peak
// at ~190 MB of heap at 1M nodes instead of ~30 MB: bbolt holds every page such a command dirties.)
func (s *scaleCluster) load(from, to int) {
	s.b.Helper()
	ctx := context.Background()
	per := min(1_000, (to-from)/10)
	for start := from; start < to; start += per {
		region := fmt.Sprintf("region-%d", (start/per)%10)
		req := api.RegisterRequest{Region: region, Edge: "edge-" + region, Nodes: make([]api.RegisterNode, 0, per)}
		for i := start; i < min(start+per, to); i++ {
			req.Nodes = append(req.Nodes, api.RegisterNode{Identity: scaleNodeID(i), Version: "0.29.4"})
		}
		r, err := s.leader.Register(ctx, req)
		if err != nil {
			s.b.Fatalf("register %d nodes at %d: %v", len(req.Nodes), start, err)
		}
		if r.Added != len(req.Nodes) {
			s.b.Fatalf("register at %d added %d of %d (a node id repeats)", start, r.Added, len(req.Nodes))
		}
	}
}

// cycles runs rounds of one acquire of 1,000 nodes and its report in each region, and reports
// their latency percentiles.
func (s *scaleCluster) cycles(b *testing.B, rounds int) {
	ctx := context.Background()
	var grants, reports []time.Duration
	for range rounds {
		for r := range 10 {
			s.seq++
			region, edge := fmt.Sprintf("region-%d", r), fmt.Sprintf("edge-region-%d", r)
			start := time.Now()
			a, err := s.leader.Acquire(ctx, api.AcquireRequest{Edge: edge, Region: region, MaxNodes: 1000, RequestID: fmt.Sprintf("acq-%d", s.seq)})
			grants = append(grants, time.Since(start))
			if err != nil || a.Lease == nil || len(a.Lease.Nodes) != 1000 {
				b.Fatalf("acquire in %s: %+v %v", region, a.Lease, err)
			}
			rep := api.ReportRequest{LeaseID: a.Lease.ID, Token: a.Lease.Token, Edge: edge, Region: region, RequestID: fmt.Sprintf("rep-%d", s.seq)}
			for _, id := range a.Lease.Nodes {
				rep.Results = append(rep.Results, api.NodeResult{Identity: id, Outcome: api.OutcomeReleased})
			}
			start = time.Now()
			rr, err := s.leader.Report(ctx, rep)
			reports = append(reports, time.Since(start))
			if err != nil || len(rr.Applied) != 1000 {
				b.Fatalf("report in %s: applied %d, %v", region, len(rr.Applied), err)
			}
		}
	}
	testkit.ReportLatency(b, "grant", grants)
	testkit.ReportLatency(b, "report", reports)
}

// snapshotAndJoin takes a snapshot on the leader, then joins a new member and waits until it has
// applied what the leader has; it returns both times.
func (s *scaleCluster) snapshotAndJoin(b *testing.B) (snapshot, catchup time.Duration) {
	ctx := context.Background()
	start := time.Now()
	snap, err := s.leader.Snapshot(ctx)
	if err != nil {
		b.Fatal(err)
	}
	snapshot = time.Since(start)
	b.ReportMetric(float64(snap.Size)/(1<<20), "snapshot-MB")

	s.joins++
	id := fmt.Sprintf("j%d", s.joins)
	dir := filepath.Join(s.root, id)
	joiner, err := coordinator.New(scaleConfig(id, dir, false))
	if err != nil {
		b.Fatal(err)
	}
	start = time.Now()
	req, err := joiner.JoinRequest()
	if err != nil {
		b.Fatal(err)
	}
	req.APIAddress = "http://" + id + ".invalid"
	if _, err := s.leader.Join(ctx, req); err != nil {
		b.Fatal(err)
	}
	want, _, _ := s.leader.Ledger().AppliedIndex()
	// A snapshot of a million nodes crossing loopback may take minutes.
	pollUntil(b, 5*time.Minute, id+" to catch up", func() bool {
		got, _, _ := joiner.Ledger().AppliedIndex()
		return got >= want
	})
	catchup = time.Since(start)
	if err := s.leader.Remove(ctx, api.RemoveRequest{ID: id}); err != nil {
		b.Fatal(err)
	}
	joiner.Close()
	_ = os.RemoveAll(dir)
	return snapshot, catchup
}

// reportMemory reports the process's resident memory after a GC: all of it, the anonymous part
// (Go heap, stacks) and the file-backed part (pages of the ledger's and raft log's mmaps, which
// the kernel drops under pressure), and the peak so far.
func reportMemory(b *testing.B) {
	runtime.GC()
	debug.FreeOSMemory()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, _ := strings.Cut(line, ":")
		unit := map[string]string{"VmRSS": "rss-MB", "RssAnon": "rss-anon-MB", "RssFile": "rss-file-MB", "VmHWM": "hwm-MB"}[k]
		if f := strings.Fields(v); unit != "" && len(f) == 2 {
			kb, _ := strconv.ParseFloat(f[0], 64)
			b.ReportMetric(kb/1024, unit)
		}
	}
}

// sampleAnon samples RssAnon every 10ms until the returned function is called, which returns the
// largest sample in MB: the peak of heap and stacks, which VmHWM mixes with mapped file pages.
func sampleAnon() func() float64 {
	done, peak := make(chan struct{}), make(chan float64)
	go func() {
		var most float64
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			if v := procStatusMB("RssAnon"); v > most {
				most = v
			}
			select {
			case <-done:
				peak <- most
				return
			case <-tick.C:
			}
		}
	}()
	return func() float64 { close(done); return <-peak }
}

func procStatusMB(field string) float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, _ := strings.Cut(line, ":"); k == field {
			if f := strings.Fields(v); len(f) == 2 {
				kb, _ := strconv.ParseFloat(f[0], 64)
				return kb / 1024
			}
		}
	}
	return 0
}

// reportMappedFiles reports how much of each data file's mapping is resident (/proc/self/smaps),
// to tell the ledger's share of rss-file-MB from the raft log's.
func reportMappedFiles(b *testing.B) {
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return
	}
	rss := map[string]float64{}
	file := ""
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 6 && strings.Contains(f[0], "-"):
			file = filepath.Base(f[len(f)-1])
		case len(f) == 3 && f[0] == "Rss:" && (file == "ledger.db" || file == "raft.db"):
			kb, _ := strconv.ParseFloat(f[1], 64)
			rss[file] += kb / 1024
		case len(f) >= 1 && strings.Contains(f[0], "-") && len(f) < 6:
			file = ""
		}
	}
	b.ReportMetric(rss["ledger.db"], "rss-ledger-MB")
	b.ReportMetric(rss["raft.db"], "rss-raftlog-MB")
}

// reportFiles reports the size of the leader's ledger file: its mapped pages are most of
// rss-file-MB once a grant has touched them all.
func (s *scaleCluster) reportFiles(b *testing.B) {
	fi, err := os.Stat(filepath.Join(s.root, "c1", "ledger.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(fi.Size())/(1<<20), "ledger-file-MB")
}
