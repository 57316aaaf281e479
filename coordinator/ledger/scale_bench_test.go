// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// The scale benchmarks build a ledger of 10,000, 100,000 or 1,000,000 nodes in 10 regions through
// ApplyLogs (the FSM's apply path, fsync on, one register command of MaxBatch nodes per entry) and
// measure what must not grow with it (grant, report) and what may only grow linearly (snapshot,
// restore). Raft is left out here on purpose: the bulk load would otherwise be limited by raft's
// own log, and these figures are the ledger's; coordinator/scale_bench_test.go measures the same
// through a real cluster.
//
// The 1,000,000-node size takes minutes and half a gigabyte of disk, so it runs only when the
// -bench pattern names it ("1M"); `make bench` (-bench .) runs 10k and 100k.

const scaleRegions = 10

var scaleSizes = []struct {
	name  string
	nodes int
}{{"10k", 10_000}, {"100k", 100_000}, {"1M", 1_000_000}}

// benchSelects reports whether the -bench pattern names size explicitly.
func benchSelects(size string) bool {
	f := flag.Lookup("test.bench")
	return f != nil && strings.Contains(f.Value.String(), size)
}

// scaleID spreads the nodes of one registration over the whole identity space, the pessimistic
// layout: the nodes a grant takes together live on different pages of the nodes bucket.
func scaleID(i, total int) string {
	per := scaleBatch(total)
	return fmt.Sprintf("node-%07d.example.net", (i%per)*(total/per)+i/per)
}

// scaleBatch is the size of one register command: MaxBatch, or less so that every region gets
// nodes.
func scaleBatch(total int) int { return min(MaxBatch, total/scaleRegions) }

// scaleLedger is a ledger of n nodes built through ApplyLogs.
type scaleLedger struct {
	*harness
	nodes int
	now   time.Time
}

func buildScaleLedger(b *testing.B, n int) *scaleLedger {
	b.Helper()
	h := newHarness(b)
	s := &scaleLedger{harness: h, nodes: n, now: t0}
	per := scaleBatch(n)
	for start := 0; start < n; start += per {
		region := fmt.Sprintf("region-%d", (start/per)%scaleRegions)
		// Each registration a moment after the one before, as edges find nodes over time.
		s.now = s.now.Add(time.Millisecond)
		c := &Register{Now: s.now, Edge: "edge-" + region, Policy: DefaultPolicy()}
		for i := start; i < min(start+per, n); i++ {
			c.Nodes = append(c.Nodes, RegisterNode{Identity: scaleID(i, n), Region: region, InventoryVersion: "0.29.4"})
		}
		if r := mustResult[*RegisterResult](b, h.apply(c)); r.Added != len(c.Nodes) {
			b.Fatalf("register added %d of %d", r.Added, len(c.Nodes))
		}
	}
	return s
}

// cycle grants up to batch nodes of region to its edge and reports them all released (back to
// waiting, no attempt counted), so the ledger keeps its size and shape however often it runs.
func (s *scaleLedger) cycle(b *testing.B, region string, batch int) (grant, report time.Duration) {
	b.Helper()
	s.now = s.now.Add(time.Second)
	edge := "edge-" + region
	start := time.Now()
	r := s.apply(&Grant{Now: s.now, LeaseID: fmt.Sprintf("lease-%d", s.index+1), Edge: edge, Region: region, Max: batch, TTL: 30 * time.Second, Policy: DefaultPolicy()})
	grant = time.Since(start)
	ls := mustResult[*GrantResult](b, r).Lease
	if ls == nil || len(ls.Nodes) != batch {
		b.Fatalf("grant in %s: %+v", region, ls)
	}
	c := &Report{Now: s.now, LeaseID: ls.ID, Token: ls.Token, Policy: DefaultPolicy(), Edge: edge, Region: region, RequestID: ls.ID, Keep: 15 * time.Minute}
	for _, id := range ls.Nodes {
		c.Results = append(c.Results, Result{Identity: id, Outcome: api.OutcomeReleased})
	}
	start = time.Now()
	rr := mustResult[*ReportResult](b, s.apply(c))
	report = time.Since(start)
	if rr.Accepted != batch {
		b.Fatalf("report accepted %d of %d", rr.Accepted, batch)
	}
	return grant, report
}

// BenchmarkLedgerScale builds each size once; its sub-benchmarks measure on that ledger.
// Example: go test -run '^$' -bench 'BenchmarkLedgerScale/(10k|100k|1M)/' -benchtime 10x ./ledger/
func BenchmarkLedgerScale(b *testing.B) {
	for _, size := range scaleSizes {
		b.Run(size.name, func(b *testing.B) {
			if size.nodes >= 1_000_000 && !benchSelects(size.name) {
				b.Skipf("%s nodes: name %s in -bench to run it", size.name, size.name)
			}
			start := time.Now()
			s := buildScaleLedger(b, size.nodes)
			b.Logf("%s nodes applied in %s", size.name, time.Since(start).Round(time.Millisecond))
			if st, err := os.Stat(s.l.Path()); err == nil {
				b.Logf("ledger file %.1f MB", float64(st.Size())/(1<<20))
			}
			b.Run("grant+report", func(b *testing.B) { benchCycles(b, s) })
			b.Run("snapshot", func(b *testing.B) { benchSnapshot(b, s.l) })
			b.Run("restore", func(b *testing.B) { benchRestore(b, s.l) })
			b.Run("nodes-filtered", func(b *testing.B) { benchFilteredPage(b, s.l) })
			b.Run("node-cost", func(b *testing.B) { benchNodeCost(b, s) })
			// Last: it leaves one region locked to one edge.
			b.Run("grant-while-locked-to-another-edge", func(b *testing.B) { benchLockedGrant(b, s) })
		})
	}
}

// benchCycles measures, per op, one grant of 1,000 nodes (the lease manager's default batch) in
// each region and the report that follows each, through ApplyLogs with fsync on: -benchtime 10x
// gives 100 samples of each.
func benchCycles(b *testing.B, s *scaleLedger) {
	const batch = 1000
	grants := make([]time.Duration, 0, b.N*scaleRegions)
	reports := make([]time.Duration, 0, b.N*scaleRegions)
	b.ResetTimer()
	for range b.N {
		for r := range scaleRegions {
			g, rep := s.cycle(b, fmt.Sprintf("region-%d", r), min(batch, s.nodes/scaleRegions))
			grants = append(grants, g)
			reports = append(reports, rep)
		}
	}
	b.StopTimer()
	testkit.ReportLatency(b, "grant", grants)
	testkit.ReportLatency(b, "report", reports)
}

// benchNodeCost measures what a node's lease costs a member's ledger in CPU and in pages written,
// the two a member's CPU goes with: per op, a grant of costLease nodes (the ten-region
// benchmark's mean lease) and the report of the lease granted costLag ops before it, applied
// together as raft's BatchingFSM hands a busy member its entries. The nodes are released, so the
// ledger keeps its size however long it runs. CPU is the process's (getrusage: the fdatasyncs'
// kernel time, which is CPU on a VM, and the collector's included).
func benchNodeCost(b *testing.B, s *scaleLedger) {
	const costLease, costLag = 45, 5
	var lag []*Lease
	var nodes int
	st0, cpu0 := s.l.db.Stats(), testkit.SelfCPU(b)
	b.ResetTimer()
	for i := range b.N {
		region := fmt.Sprintf("region-%d", i%scaleRegions)
		s.now = s.now.Add(time.Millisecond)
		batch := []*raft.Log{s.entry(&Grant{Now: s.now, LeaseID: fmt.Sprintf("lease-%d", s.index+1), Edge: "edge-" + region, Region: region, Max: costLease, TTL: 30 * time.Second, Policy: DefaultPolicy()})}
		if len(lag) == costLag {
			ls := lag[0]
			lag = lag[1:]
			c := &Report{Now: s.now, LeaseID: ls.ID, Token: ls.Token, Policy: DefaultPolicy(), Edge: ls.Edge, Region: ls.Region, RequestID: ls.ID, Keep: 15 * time.Minute}
			for _, id := range ls.Nodes {
				c.Results = append(c.Results, Result{Identity: id, Outcome: api.OutcomeReleased})
			}
			batch = append(batch, s.entry(c))
		}
		res := s.l.ApplyLogs(batch)
		ls := mustResult[*GrantResult](b, res[0]).Lease
		if ls == nil || len(ls.Nodes) != costLease {
			b.Fatalf("grant in %s: %+v", region, ls)
		}
		for _, r := range res[1:] {
			if rr := mustResult[*ReportResult](b, r); rr.Accepted != costLease {
				b.Fatalf("report accepted %d of %d", rr.Accepted, costLease)
			}
		}
		lag = append(lag, ls)
		nodes += costLease
	}
	b.StopTimer()
	cpu := testkit.SelfCPU(b) - cpu0
	st := s.l.db.Stats()
	writes := st.TxStats.GetWrite() - st0.TxStats.GetWrite()
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(nodes), "cpu-us/node")
	b.ReportMetric(float64(writes)/float64(nodes), "pages/node")
}

// benchSnapshot measures Snapshot + Persist into raft's file snapshot store (CRC, fsync, rename),
// as raft takes one.
func benchSnapshot(b *testing.B, l *Ledger) {
	store, err := raft.NewFileSnapshotStore(b.TempDir(), 1, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	b.ResetTimer()
	for range b.N {
		size = persistTo(b, l, store).Size
	}
	b.StopTimer()
	b.ReportMetric(float64(size)/(1<<20), "snapshot-MB")
	reportRSS(b)
}

// benchRestore measures Restore of that snapshot into another member's ledger: the stream read
// from raft's snapshot store (CRC checked) into a temporary file, fsynced, checked, renamed and
// reopened.
func benchRestore(b *testing.B, l *Ledger) {
	store, err := raft.NewFileSnapshotStore(b.TempDir(), 1, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	meta := persistTo(b, l, store)
	other, err := Open(filepath.Join(b.TempDir(), "ledger.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer other.Close()
	want, _, _ := l.AppliedIndex()
	b.ResetTimer()
	for range b.N {
		_, rc, err := store.Open(meta.ID)
		if err != nil {
			b.Fatal(err)
		}
		if err := other.FSM().Restore(rc); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if got, _, _ := other.AppliedIndex(); got != want {
		b.Fatalf("restored ledger applied %d, want %d", got, want)
	}
}

// reportRSS reports this process's resident memory: all of it, its anonymous part (heap, stacks)
// and its file-backed part (the ledger's mmap pages the kernel may drop at will), and the peak.
func reportRSS(b *testing.B) {
	st := procStatus()
	b.ReportMetric(st["VmRSS"], "rss-MB")
	b.ReportMetric(st["RssAnon"], "rss-anon-MB")
	b.ReportMetric(st["RssFile"], "rss-file-MB")
	b.ReportMetric(st["VmHWM"], "hwm-MB")
}

// procStatus reads the kB fields of /proc/self/status, in MB.
func procStatus() map[string]float64 {
	out := map[string]float64{}
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		f := strings.Fields(v)
		if !ok || len(f) != 2 || f[1] != "kB" {
			continue
		}
		kb, _ := strconv.ParseFloat(f[0], 64)
		out[k] = kb / 1024
	}
	return out
}

// benchFilteredPage measures one page of a filtered listing that matches nothing (no node is
// abandoned): the worst case of a filter, every record it may examine is examined.
func benchFilteredPage(b *testing.B, l *Ledger) {
	for range b.N {
		if _, _, err := l.Nodes(NodeFilter{Region: "region-3", State: api.StateAbandoned, Limit: 100}); err != nil {
			b.Fatal(err)
		}
	}
}

// benchLockedGrant measures a grant to another edge while every waiting node of a region is
// locked to one edge (its lock window after it gave them all back, as after an edge's leases
// expired): the grant finds nothing, but reads the region's whole waiting index to know.
func benchLockedGrant(b *testing.B, s *scaleLedger) {
	b.StopTimer()
	const region = "region-9"
	per := s.nodes / scaleRegions
	for done := 0; done < per; done += MaxBatch {
		s.cycle(b, region, min(MaxBatch, per-done))
	}
	b.StartTimer()
	for range b.N {
		s.now = s.now.Add(time.Millisecond)
		r := s.apply(&Grant{Now: s.now, LeaseID: fmt.Sprintf("lease-%d", s.index+1), Edge: "edge-other", Region: region, Max: 1000, TTL: 30 * time.Second, Policy: DefaultPolicy()})
		if g := mustResult[*GrantResult](b, r); g.Lease != nil {
			b.Fatalf("granted %d nodes locked to another edge", len(g.Lease.Nodes))
		}
	}
}
