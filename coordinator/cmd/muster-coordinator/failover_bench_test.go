// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// BenchmarkFailover_SIGKILLToNextGrantedLease measures, per iteration, the time from SIGKILL of
// the leader of a 3-process cluster to the next lease the cluster grants; the killed member is
// restarted from its data dir before the next iteration. Run it with a fixed count, e.g.
//
//	go test -run '^$' -bench Failover -benchtime 20x ./cmd/muster-coordinator
//
// and read failover-median-s / failover-p90-s / failover-max-s.
func BenchmarkFailover_SIGKILLToNextGrantedLease(b *testing.B) {
	c, _ := startThree(b)

	urls := c.apiURLs("")
	edge, err := api.NewClient(urls, api.WithToken(e2eEdgeToken), api.WithRetryDelay(20*time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	admin, err := api.NewClient(urls, api.WithToken(e2eAdminToken))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var nodes []api.RegisterNode
	for i := 0; i < 2000; i++ {
		nodes = append(nodes, api.RegisterNode{Identity: fmt.Sprintf("bench-%04d", i)})
	}
	if _, err := edge.Register(ctx, api.RegisterRequest{Region: "ams", Edge: "bench", Nodes: nodes}); err != nil {
		b.Fatal(err)
	}

	var took []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		// Every member agrees on the leader before the kill, so each run starts from a healthy cluster.
		var leaderID string
		testkit.WaitFor(b, 60*time.Second, "all members to agree on a leader", func() (bool, string) {
			ids := map[string]bool{}
			for _, u := range urls {
				st, err := admin.StatusOf(ctx, u)
				if err != nil || st.LeaderID == "" {
					return false, fmt.Sprint(u, err)
				}
				ids[st.LeaderID] = true
				leaderID = st.LeaderID
			}
			return len(ids) == 1, fmt.Sprint(ids)
		})
		leader := c.proc(leaderID)
		b.StartTimer()

		killed := time.Now()
		if err := leader.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			b.Fatal(err)
		}
		for {
			actx, cancel := context.WithTimeout(ctx, 10*time.Second)
			r, err := edge.Acquire(actx, api.AcquireRequest{Edge: fmt.Sprintf("bench-%d", i), Region: "ams", MaxNodes: 1, Wait: api.Duration(time.Second)})
			cancel()
			if err == nil && r.Lease != nil {
				break
			}
			if time.Since(killed) > 2*time.Minute {
				b.Fatalf("no lease 2m after the kill: %v", err)
			}
		}
		took = append(took, time.Since(killed))

		b.StopTimer()
		<-leader.exited
		c.relaunch(leader, false, "")
		b.StartTimer()
	}
	b.StopTimer()
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	b.ReportMetric(took[len(took)/2].Seconds(), "failover-median-s")
	b.ReportMetric(took[len(took)*9/10].Seconds(), "failover-p90-s")
	b.ReportMetric(took[len(took)-1].Seconds(), "failover-max-s")
}
