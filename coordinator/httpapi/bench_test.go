// SPDX-License-Identifier: Apache-2.0

package httpapi_test

import (
	"fmt"
	"testing"

	"github.com/seed96588659/muster/coordinator/httpapi"
	"github.com/seed96588659/muster/pkg/api"
)

// benchmarkLifecycle registers, leases and reports batches of nodes over HTTP on a real
// 3-member cluster; each node makes three ledger transitions (registered, leased, provisioned).
func benchmarkLifecycle(b *testing.B, viaFollower bool, batch int) {
	ms := clusterWith(b, 3, func(c *httpapi.Config) { c.MaxBodyBytes = httpapi.DefaultMaxBodyBytes })
	target := ms[0]
	if viaFollower {
		target = ms[1]
	}
	// The client would learn the leader from X-Muster-Leader; pin it to measure forwarding.
	edge, err := api.NewClient([]string{target.url}, api.WithToken(edgeToken))
	if err != nil {
		b.Fatal(err)
	}
	ctx := ctxT(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if viaFollower {
			edge, _ = api.NewClient([]string{target.url}, api.WithToken(edgeToken))
		}
		nodes := make([]api.RegisterNode, batch)
		for j := range nodes {
			nodes[j] = api.RegisterNode{Identity: fmt.Sprintf("b%d-n%d", i, j)}
		}
		if _, err := edge.Register(ctx, api.RegisterRequest{Region: "ams", Edge: "bench", Nodes: nodes}); err != nil {
			b.Fatal(err)
		}
		got, err := edge.Acquire(ctx, api.AcquireRequest{Edge: "bench", Region: "ams", MaxNodes: batch})
		if err != nil || got.Lease == nil || len(got.Lease.Nodes) != batch {
			b.Fatalf("acquire: %v %+v", err, got.Lease)
		}
		results := make([]api.NodeResult, batch)
		for j, n := range got.Lease.Nodes {
			results[j] = api.NodeResult{Identity: n, Outcome: api.OutcomeProvisioned}
		}
		rep, err := edge.Report(ctx, api.ReportRequest{LeaseID: got.Lease.ID, Token: got.Lease.Token, Edge: "bench", Region: "ams", Results: results})
		if err != nil || len(rep.Applied) != batch {
			b.Fatalf("report: %v %d applied", err, len(rep.Applied))
		}
	}
	b.ReportMetric(float64(3*batch*b.N)/b.Elapsed().Seconds(), "transitions/s")
}

// BenchmarkAPI_LifecycleOnTheLeader measures the HTTP layer plus the core, batches of 1000.
func BenchmarkAPI_LifecycleOnTheLeader(b *testing.B) { benchmarkLifecycle(b, false, 1000) }

// BenchmarkAPI_LifecycleForwardedByAFollower adds the follower's hop to the leader.
func BenchmarkAPI_LifecycleForwardedByAFollower(b *testing.B) { benchmarkLifecycle(b, true, 1000) }
