// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"context"
	"testing"
	"time"

	"github.com/seed96588659/muster/coordinator/internal/testcluster"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// edgeCalls drives one edge against whichever member leads, recording every acknowledged acquire
// and renew in h on the world's real time (the edge's own clock in these tests).
type edgeCalls struct {
	c      *testcluster.Cluster
	h      *holds
	edge   string
	region string
}

func (e edgeCalls) real() time.Duration { return e.c.Clock.World().Real() }

func (e edgeCalls) acquire(n int) *api.Lease {
	e.c.T().Helper()
	var r api.AcquireResponse
	var sent time.Duration
	e.c.OnLeader("acquire for "+e.edge, func(m *testcluster.Member) error {
		sent = e.real()
		var err error
		r, err = m.Svc.Acquire(context.Background(), api.AcquireRequest{Edge: e.edge, Region: e.region, MaxNodes: n, Wait: api.Duration(10 * time.Millisecond)})
		return err
	})
	if r.Lease != nil {
		e.h.acked(r.Lease, sent, e.real(), heldOf(r))
	}
	return r.Lease
}

func (e edgeCalls) renew(l *api.Lease) error {
	e.c.T().Helper()
	var err error
	for range 20 {
		m := e.c.WaitLeader()
		sent := e.real()
		var r api.RenewResponse
		r, err = m.Svc.Renew(context.Background(), api.RenewRequest{LeaseID: l.ID, Token: l.Token, Edge: e.edge, Region: e.region})
		if err == nil {
			e.h.acked(&r.Lease, sent, e.real(), 0)
			return nil
		}
		if !testcluster.LeadershipError(err) {
			return err
		}
	}
	return err
}

// expireDue runs the leader's expiry now, so a test need not wait for its loop.
func expireDue(c *testcluster.Cluster) {
	c.T().Helper()
	c.OnLeader("expire", func(m *testcluster.Member) error { return m.Svc.Leases().ExpireDue(context.Background()) })
}

// TestCluster_ClockStepsSkewAndFailoverNeverOverlapHolds: members with their own clocks (skewed
// by minutes, drifting), the leader's wall clock stepped forwards and backwards between a grant
// and its expiry, and a failover right after a step. Whatever the clocks do, no node is granted
// to an edge while another edge may still act on it by its own count.
func TestCluster_ClockStepsSkewAndFailoverNeverOverlapHolds(t *testing.T) {
	c := testcluster.New(t, 3)
	c.MemberClock("c2", 90*time.Second, 1e-4)
	c.MemberClock("c3", -90*time.Second, -1e-4)
	c.StartAll()
	c.Register("eu", testcluster.NodeIDs("n", 4)...)
	h := newHolds(0)
	e := edgeCalls{c: c, h: h, edge: "edge-e", region: "eu"}
	f := edgeCalls{c: c, h: h, edge: "edge-f", region: "eu"}
	ttl := c.Leases.TTL

	held := e.acquire(2)
	if held == nil {
		t.Fatal("edge e got no lease")
	}
	// Forward by more than a TTL and the grace: edge e still counts its lease valid.
	c.ClockOf(c.WaitLeader()).Step(3 * time.Minute)
	expireDue(c)
	c.Clock.Advance(ttl / 3)
	expireDue(c)
	f.acquire(4)
	if err := e.renew(held); err != nil {
		t.Errorf("renew a third of a TTL after the grant, after a forward step: %v", err)
	}
	// Backwards, then at once a failover to a member whose clock is skewed.
	c.ClockOf(c.WaitLeader()).Step(-6 * time.Minute)
	c.Clock.Advance(ttl / 3)
	expireDue(c)
	f.acquire(4)
	old := c.WaitLeader()
	c.ClockOf(old).Step(3 * time.Minute)
	c.Stop(old)
	c.WaitLeader()
	c.Start(old, false)
	c.Clock.Advance(ttl / 3)
	expireDue(c)
	f.acquire(4)
	if err := e.renew(held); err != nil {
		t.Errorf("renew after a failover: %v", err)
	}
	// Edge e goes quiet; f asks again and again while its lease runs out.
	for range 8 {
		c.Clock.Advance(ttl / 4)
		expireDue(c)
		f.acquire(4)
	}
	if n := h.check(t); n < 4 {
		t.Fatalf("only %d acknowledged calls: %s", n, h)
	}
	if got := f.acquire(4); got == nil {
		// Liveness: by now e's lease ran out on every count, and its nodes are f's to take.
		testkit.WaitFor(t, testcluster.WaitLimit, "edge e's nodes to return", func() bool {
			c.Clock.Advance(time.Second)
			expireDue(c)
			return f.acquire(4) != nil
		})
	}
	h.check(t)
}

// heldOf is the server-measured time an acquire was held.
func heldOf(r api.AcquireResponse) time.Duration { return r.Held.Std() }
