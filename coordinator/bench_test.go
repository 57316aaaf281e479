// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed96588659/muster/coordinator/internal/testcluster"
	"github.com/seed96588659/muster/pkg/api"
)

// BenchmarkCluster_LedgerTransitions drives batched register -> grant -> report cycles through a
// 3-member loopback cluster (fsync on) from several edges at once. One transition is one node
// changing state in the replicated ledger; each op moves batch nodes through three of them.
func BenchmarkCluster_LedgerTransitions(b *testing.B) {
	const batch, edges = 1000, 16
	c := testcluster.New(b, 3)
	c.LedgerNoSync = os.Getenv("BENCH_LEDGER_NOSYNC") != ""
	c.RaftNoSync = os.Getenv("BENCH_RAFT_NOSYNC") != ""
	c.StartAll()
	leader := c.WaitLeader()
	ctx := context.Background()
	var seq int
	var mu sync.Mutex
	next := func() int {
		mu.Lock()
		defer mu.Unlock()
		seq++
		return seq
	}
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, edges)
	work := make(chan struct{}, b.N)
	for range b.N {
		work <- struct{}{}
	}
	close(work)
	for e := range edges {
		wg.Add(1)
		go func() {
			defer wg.Done()
			region := fmt.Sprintf("r%d", e)
			edge := fmt.Sprintf("edge-%d", e)
			for range work {
				n := next()
				req := api.RegisterRequest{Region: region, Edge: edge, Nodes: make([]api.RegisterNode, batch)}
				for i := range req.Nodes {
					req.Nodes[i].Identity = fmt.Sprintf("n-%d-%d", n, i)
				}
				if _, err := leader.Svc.Register(ctx, req); err != nil {
					errs <- err
					return
				}
				r, err := leader.Svc.Acquire(ctx, api.AcquireRequest{Edge: edge, Region: region, MaxNodes: batch})
				if err != nil || r.Lease == nil {
					errs <- fmt.Errorf("acquire: %+v %v", r, err)
					return
				}
				rep := api.ReportRequest{LeaseID: r.Lease.ID, Token: r.Lease.Token, Edge: edge, Region: region, Results: make([]api.NodeResult, len(r.Lease.Nodes))}
				for i, id := range r.Lease.Nodes {
					rep.Results[i] = api.NodeResult{Identity: id, Outcome: api.OutcomeProvisioned}
				}
				if _, err := leader.Svc.Report(ctx, rep); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	b.ReportMetric(float64(b.N*batch*3)/elapsed.Seconds(), "transitions/s")
	if os.Getenv("BENCH_DUMP") != "" {
		mfs, _ := leader.Reg.Gather()
		for _, mf := range mfs {
			if mf.GetName() == "muster_coordinator_apply_seconds" {
				for _, m := range mf.GetMetric() {
					h := m.GetHistogram()
					b.Logf("%v: n=%d mean=%.1fms", m.GetLabel()[0].GetValue(), h.GetSampleCount(), 1000*h.GetSampleSum()/float64(h.GetSampleCount()))
				}
			}
		}
	}
}

// BenchmarkCluster_FailoverToNextGrant measures, per op, the time from stopping the leader (its
// process state gone, as after SIGKILL: no leadership transfer) to the first lease granted by its
// successor. The stopped member restarts from its files before the next op.
func BenchmarkCluster_FailoverToNextGrant(b *testing.B) {
	c := testcluster.New(b, 3)
	c.StartAll()
	ctx := context.Background()
	var samples []time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		region := fmt.Sprintf("r%d", i)
		c.Register(region, testcluster.NodeIDs(region+"-n", 10)...)
		c.WaitConverged(c.Running()...)
		old := c.WaitLeader()
		b.StartTimer()
		start := time.Now()
		c.Stop(old)
		for {
			var l *testcluster.Member
			for _, m := range c.Running() {
				if m.Svc.IsLeader() {
					l = m
				}
			}
			if l != nil {
				r, err := l.Svc.Acquire(ctx, api.AcquireRequest{Edge: "e", Region: region, MaxNodes: 1})
				if err == nil && r.Lease != nil {
					break
				}
			}
			time.Sleep(time.Millisecond) // poll interval of the measuring client
		}
		samples = append(samples, time.Since(start))
		b.StopTimer()
		c.Start(old, false)
		c.WaitConverged(c.Running()...)
		b.StartTimer()
	}
	b.StopTimer()
	reportMedianMax(b, samples)
}

// BenchmarkLedger_Memory100k registers 100,000 nodes on a one-member cluster and reports the Go
// heap in use, the process RSS and the ledger file size.
func BenchmarkLedger_Memory100k(b *testing.B) {
	for range b.N {
		b.StopTimer()
		c := testcluster.New(b, 1)
		c.StartAll()
		b.StartTimer()
		for i := 0; i < 100; i++ {
			req := api.RegisterRequest{Region: fmt.Sprintf("r%d", i%4), Edge: "e"}
			for j := range 1000 {
				req.Nodes = append(req.Nodes, api.RegisterNode{Identity: fmt.Sprintf("node-%03d-%04d.example.net", i, j), Version: "0.29.4"})
			}
			c.Register(req.Region, func() []string {
				ids := make([]string, len(req.Nodes))
				for k, n := range req.Nodes {
					ids[k] = n.Identity
				}
				return ids
			}()...)
		}
		b.StopTimer()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MB")
		b.ReportMetric(rssMB(), "rss-MB")
		if st, err := os.Stat(filepath.Join(c.Members[0].Dir, "ledger.db")); err == nil {
			b.ReportMetric(float64(st.Size())/(1<<20), "ledger-MB")
		}
		c.CloseAll()
	}
}

// reportMedianMax reports the median and the largest of the samples, in ms.
func reportMedianMax(b *testing.B, samples []time.Duration) {
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)/2].Milliseconds()), "median-ms")
	b.ReportMetric(float64(samples[len(samples)-1].Milliseconds()), "max-ms")
}

func rssMB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}
