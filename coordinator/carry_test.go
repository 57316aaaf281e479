// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"context"
	"slices"
	"testing"

	"github.com/seed96588659/muster/coordinator/internal/testcluster"
	"github.com/seed96588659/muster/pkg/api"
)

// An acquire carrying reports answers each one as a report of its own would be answered: applied
// results, results refused by name (a bad outcome), and a report refused whole (an unknown lease)
// with its code; the grant goes on, and every member records the same.
func TestService_AcquireAnswersTheReportsItCarries(t *testing.T) {
	c := testcluster.New(t, 3)
	c.StartAll()
	c.Register("eu", testcluster.NodeIDs("n", 4)...)
	first := c.Acquire("edge-eu", "eu", 2)
	ctx := context.Background()

	req := api.AcquireRequest{Edge: "edge-eu", Region: "eu", MaxNodes: 2, RequestID: "acq-2", Reports: []api.ReportRequest{
		{LeaseID: first.ID, Token: first.Token, Edge: "edge-eu", Region: "eu", RequestID: "rep-1", Results: []api.NodeResult{
			{Identity: first.Nodes[0], Outcome: api.OutcomeProvisioned},
			{Identity: first.Nodes[1], Outcome: "nonsense"},
		}},
		{LeaseID: "no-such-lease", Token: 9, Edge: "edge-eu", Region: "eu", RequestID: "rep-2", Results: []api.NodeResult{
			{Identity: first.Nodes[1], Outcome: api.OutcomeProvisioned},
		}},
	}}
	var resp api.AcquireResponse
	c.OnLeader("acquire carrying reports", func(m *testcluster.Member) error {
		var err error
		resp, err = m.Svc.Acquire(ctx, req)
		return err
	})
	if !resp.CarriesReports || len(resp.Reports) != 2 {
		t.Fatalf("answer carries %v with %d report answers", resp.CarriesReports, len(resp.Reports))
	}
	one, two := resp.Reports[0], resp.Reports[1]
	if one.RequestID != "rep-1" || one.Error != nil || !slices.Equal(one.Applied, first.Nodes[:1]) || len(one.Rejected) != 1 || one.Rejected[0].Identity != first.Nodes[1] {
		t.Fatalf("first report answered %+v", one)
	}
	if two.RequestID != "rep-2" || two.Error == nil || two.Error.Code != api.CodeUnknownLease {
		t.Fatalf("report of an unknown lease answered %+v", two)
	}
	if resp.Lease == nil || len(resp.Lease.Nodes) != 2 {
		t.Fatalf("granted %+v", resp.Lease)
	}
	c.WaitConverged(c.Running()...)
	for _, m := range c.Running() {
		n, err := m.Svc.Node(ctx, first.Nodes[0])
		if err != nil || n.State != api.StateProvisioned {
			t.Fatalf("member %s: %s is %+v (%v)", m.ID, first.Nodes[0], n, err)
		}
	}
}
