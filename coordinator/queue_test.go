// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"context"
	"testing"

	"github.com/seed96588659/muster/coordinator/internal/testcluster"
	"github.com/seed96588659/muster/pkg/api"
)

// Acquire and heartbeat answers carry the asking edge's region's queue from the ledger's counts:
// a grant's nodes already count as leased in its own answer, another region's nodes never show,
// and a region with nothing in it is sent as explicit zeros (not left out).
func TestService_AcquireAndHeartbeatCarryTheRegionQueue(t *testing.T) {
	c := testcluster.New(t, 1)
	c.StartAll()
	c.Register("eu", testcluster.NodeIDs("n", 7)...)
	c.Register("us", testcluster.NodeIDs("u", 2)...)
	ctx := context.Background()

	heartbeat := func(region string) *api.RegionQueue {
		t.Helper()
		var hb api.HeartbeatResponse
		c.OnLeader("heartbeat", func(m *testcluster.Member) error {
			var err error
			hb, err = m.Svc.Heartbeat(ctx, api.HeartbeatRequest{Edge: "edge-" + region, Region: region})
			return err
		})
		if hb.Queue == nil {
			t.Fatalf("heartbeat of %s carried no queue", region)
		}
		return hb.Queue
	}
	acquire := func(region string, n int) api.AcquireResponse {
		t.Helper()
		var r api.AcquireResponse
		c.OnLeader("acquire", func(m *testcluster.Member) error {
			var err error
			r, err = m.Svc.Acquire(ctx, api.AcquireRequest{Edge: "edge-" + region, Region: region, MaxNodes: n})
			return err
		})
		if r.Lease == nil || r.Queue == nil {
			t.Fatalf("acquire of %d in %s: lease %v, queue %v", n, region, r.Lease, r.Queue)
		}
		return r
	}

	if q := heartbeat("eu"); *q != (api.RegionQueue{Waiting: 7}) {
		t.Errorf("eu before any lease: %+v, want 7 waiting", *q)
	}
	r := acquire("eu", 3)
	if *r.Queue != (api.RegionQueue{Waiting: 4, Leased: 3}) {
		t.Errorf("acquire answer: %+v, want 4 waiting and its own 3 leased", *r.Queue)
	}
	c.Report(api.ReportRequest{LeaseID: r.Lease.ID, Token: r.Lease.Token, Edge: "edge-eu", Region: "eu",
		Results: []api.NodeResult{{Identity: r.Lease.Nodes[0], Outcome: api.OutcomeProvisioned}}})
	if q := heartbeat("eu"); *q != (api.RegionQueue{Waiting: 4, Leased: 2}) {
		t.Errorf("eu after one result: %+v, want 4 waiting and 2 leased", *q)
	}
	if q := heartbeat("us"); *q != (api.RegionQueue{Waiting: 2}) {
		t.Errorf("us: %+v, want its own 2 waiting only", *q)
	}
	if q := heartbeat("ap"); *q != (api.RegionQueue{}) {
		t.Errorf("a region with no nodes: %+v, want zeros", *q)
	}
}
