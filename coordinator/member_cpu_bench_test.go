// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seed96588659/muster/coordinator/internal/testcluster"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// BenchmarkCluster_MemberCPUPerNode is the ten-region benchmark's coordinator side without its
// fleet: ten edges, one region each, lease 45 nodes at a time from a 3-member loopback cluster
// (real Raft over TCP, fsync on) and report them provisioned, as the edges do at 10,000 nodes a
// region. All three members run in this process, so its CPU per node is the members' (the
// driver's share is small). One op is one node; the nodes are registered before the clock
// starts. Runs of one build drift by tens of percent on a shared VM: compare builds alternated.
// "apart" sends each report on its own, "carried" has it ride the edge's next acquire, as edges
// do from cluster protocol 6. The calls go to the service, not through HTTP.
//
//	go test -run '^$' -bench '^BenchmarkCluster_MemberCPUPerNode$' -benchtime 20000x .
func BenchmarkCluster_MemberCPUPerNode(b *testing.B) {
	b.Run("apart", func(b *testing.B) { benchMemberCPU(b, false) })
	b.Run("carried", func(b *testing.B) { benchMemberCPU(b, true) })
}

func benchMemberCPU(b *testing.B, carry bool) {
	const regions, lease = 10, 45
	c := testcluster.New(b, 3)
	c.StartAll()
	leader := c.WaitLeader()
	ctx := context.Background()
	per := (b.N + regions - 1) / regions
	for r := range regions {
		ids := testcluster.NodeIDs(fmt.Sprintf("r%02d-n", r), per)
		for chunk := range slices.Chunk(ids, api.MaxRegisterNodes) {
			c.Register(fmt.Sprintf("r%02d", r), chunk...)
		}
	}
	// Entries the leader applied: its applied index.
	entries := func() uint64 {
		st, err := leader.Svc.Status(ctx)
		if err != nil {
			b.Fatal(err)
		}
		return st.AppliedIndex
	}
	before, cpu := entries(), testkit.SelfCPU(b)
	b.ResetTimer()
	var wg sync.WaitGroup
	errs := make(chan error, regions)
	for r := range regions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			region := fmt.Sprintf("r%02d", r)
			edge := "edge-" + region
			var carried []api.ReportRequest
			for done := 0; done < per; {
				a, err := leader.Svc.Acquire(ctx, api.AcquireRequest{Edge: edge, Region: region, MaxNodes: lease, Wait: api.Duration(time.Second), Reports: carried})
				if err != nil || a.Lease == nil || len(a.Reports) != len(carried) {
					errs <- fmt.Errorf("acquire in %s after %d nodes: %+v %v", region, done, a, err)
					return
				}
				rep := api.ReportRequest{LeaseID: a.Lease.ID, Token: a.Lease.Token, Edge: edge, Region: region, RequestID: a.Lease.ID}
				for _, id := range a.Lease.Nodes {
					rep.Results = append(rep.Results, api.NodeResult{Identity: id, Outcome: api.OutcomeProvisioned})
				}
				done += len(a.Lease.Nodes)
				carried = nil
				if carry && done < per {
					carried = []api.ReportRequest{rep}
					continue
				}
				if _, err := leader.Svc.Report(ctx, rep); err != nil {
					errs <- fmt.Errorf("report in %s: %w", region, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	nodes := float64(per * regions)
	b.ReportMetric(float64(testkit.SelfCPU(b)-cpu)/nodes/1e3, "cpu-µs/node")
	b.ReportMetric(1000*float64(entries()-before)/nodes, "entries/1000-nodes")
	b.ReportMetric(0, "ns/op")
}
