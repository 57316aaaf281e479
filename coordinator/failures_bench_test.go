// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/seed96588659/muster/pkg/api"
)

// BenchmarkFailuresQuery measures the status page's "recent failures" read on a one-member
// cluster of 100,000 nodes in 10 regions (loaded as BenchmarkClusterScale loads them), 100 of
// which failed once:
//
//   - before/page-scan: what the page did until the failure index: pages of 10,000 nodes through
//     Service.Nodes, at most 5 (50,000 nodes, so it missed the failures of the other half),
//     keeping the nodes with a last error, newest first;
//
//   - before/full-scan: the same over every page, the cost of a complete answer;
//
//   - after/index: Service.Failures(50), the ledger's failure index.
//
//     go test -run '^$' -bench BenchmarkFailuresQuery -benchtime 20x .
func BenchmarkFailuresQuery(b *testing.B) {
	const nodes, failed = 100_000, 100
	s := startScaleLeader(b)
	s.load(0, nodes)
	ctx := context.Background()
	a, err := s.leader.Acquire(ctx, api.AcquireRequest{Edge: "edge-region-0", Region: "region-0", MaxNodes: 1000})
	if err != nil || a.Lease == nil {
		b.Fatalf("acquire: %+v %v", a, err)
	}
	rep := api.ReportRequest{LeaseID: a.Lease.ID, Token: a.Lease.Token, Edge: "edge-region-0", Region: "region-0"}
	for i, id := range a.Lease.Nodes {
		r := api.NodeResult{Identity: id, Outcome: api.OutcomeReleased}
		if i < failed {
			r = api.NodeResult{Identity: id, Outcome: api.OutcomeFailed, Error: fmt.Sprintf("helper exited %d", i)}
		}
		rep.Results = append(rep.Results, r)
	}
	if _, err := s.leader.Report(ctx, rep); err != nil {
		b.Fatal(err)
	}
	scan := func(b *testing.B, pages int) {
		found, read := 0, 0
		for range b.N {
			var withError []api.Node
			f := api.NodeFilter{Limit: 10_000}
			read = 0
			for p := 0; p < pages; p++ {
				page, err := s.leader.Nodes(ctx, f)
				if err != nil {
					b.Fatal(err)
				}
				read += len(page.Nodes)
				for _, n := range page.Nodes {
					if n.LastError != "" {
						withError = append(withError, n)
					}
				}
				if page.Next == "" {
					break
				}
				f.After = page.Next
			}
			slices.SortFunc(withError, func(x, y api.Node) int { return y.FinishedAt.Compare(x.FinishedAt) })
			found = len(withError)
		}
		b.ReportMetric(float64(read), "nodes-read")
		b.ReportMetric(float64(found), "failures-found")
	}
	b.Run("100k/before/page-scan", func(b *testing.B) { scan(b, 5) })
	b.Run("100k/before/full-scan", func(b *testing.B) { scan(b, nodes) })
	b.Run("100k/after/index", func(b *testing.B) {
		found := 0
		for range b.N {
			r, err := s.leader.Failures(ctx, 50)
			if err != nil {
				b.Fatal(err)
			}
			found = len(r.Failures)
		}
		b.ReportMetric(0, "nodes-read")
		b.ReportMetric(float64(found), "failures-found")
	})
}
