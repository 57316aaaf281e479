// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"context"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// edgeCalls drives one edge against whichever member leads, recording every acknowledged acquire
// and renew in h on the world's real time (the edge's own clock in these tests).
type edgeCalls struct {
	c      *cluster
	h      *holds
	edge   string
	region string
}

func (e edgeCalls) real() time.Duration { return e.c.clock.World().Real() }

func (e edgeCalls) acquire(n int) *api.Lease {
	e.c.t.Helper()
	var r api.AcquireResponse
	var sent time.Duration
	e.c.onLeader("acquire for "+e.edge, func(m *member) error {
		sent = e.real()
		var err error
		r, err = m.svc.Acquire(context.Background(), api.AcquireRequest{Edge: e.edge, Region: e.region, MaxNodes: n, Wait: api.Duration(10 * time.Millisecond)})
		return err
	})
	if r.Lease != nil {
		e.h.acked(r.Lease, sent, heldOf(r))
	}
	return r.Lease
}

func (e edgeCalls) renew(l *api.Lease) error {
	e.c.t.Helper()
	var err error
	for range 20 {
		m := e.c.waitLeader()
		sent := e.real()
		var r api.RenewResponse
		r, err = m.svc.Renew(context.Background(), api.RenewRequest{LeaseID: l.ID, Token: l.Token, Edge: e.edge, Region: e.region})
		if err == nil {
			e.h.acked(&r.Lease, sent, 0)
			return nil
		}
		if !leadershipError(err) {
			return err
		}
	}
	return err
}

// expireDue runs the leader's expiry now, so a test need not wait for its loop.
func (c *cluster) expireDue() {
	c.t.Helper()
	c.onLeader("expire", func(m *member) error { return m.svc.Leases().ExpireDue(context.Background()) })
}

// TestCluster_ClockStepsSkewAndFailoverNeverOverlapHolds: members with their own clocks (skewed
// by minutes, drifting), the leader's wall clock stepped forwards and backwards between a grant
// and its expiry, and a failover right after a step. Whatever the clocks do, no node is granted
// to an edge while another edge may still act on it by its own count.
func TestCluster_ClockStepsSkewAndFailoverNeverOverlapHolds(t *testing.T) {
	c := newCluster(t, 3, false)
	c.memberClock("c2", 90*time.Second, 1e-4)
	c.memberClock("c3", -90*time.Second, -1e-4)
	c.startAll()
	c.register("eu", nodeIDs("n", 4)...)
	h := newHolds(0)
	e := edgeCalls{c: c, h: h, edge: "edge-e", region: "eu"}
	f := edgeCalls{c: c, h: h, edge: "edge-f", region: "eu"}
	ttl := c.leases.TTL

	held := e.acquire(2)
	if held == nil {
		t.Fatal("edge e got no lease")
	}
	// Forward by more than a TTL and the grace: edge e still counts its lease valid.
	c.clockOf(c.waitLeader()).Step(3 * time.Minute)
	c.expireDue()
	c.clock.Advance(ttl / 3)
	c.expireDue()
	f.acquire(4)
	if err := e.renew(held); err != nil {
		t.Errorf("renew a third of a TTL after the grant, after a forward step: %v", err)
	}
	// Backwards, then at once a failover to a member whose clock is skewed.
	c.clockOf(c.waitLeader()).Step(-6 * time.Minute)
	c.clock.Advance(ttl / 3)
	c.expireDue()
	f.acquire(4)
	old := c.waitLeader()
	c.clockOf(old).Step(3 * time.Minute)
	c.stop(old)
	c.waitLeader()
	c.start(old, false)
	c.clock.Advance(ttl / 3)
	c.expireDue()
	f.acquire(4)
	if err := e.renew(held); err != nil {
		t.Errorf("renew after a failover: %v", err)
	}
	// Edge e goes quiet; f asks again and again while its lease runs out.
	for range 8 {
		c.clock.Advance(ttl / 4)
		c.expireDue()
		f.acquire(4)
	}
	if n := h.check(t); n < 4 {
		t.Fatalf("only %d acknowledged calls: %s", n, h)
	}
	if got := f.acquire(4); got == nil {
		// Liveness: by now e's lease ran out on every count, and its nodes are f's to take.
		testkit.WaitFor(t, waitLimit, "edge e's nodes to return", func() bool {
			c.clock.Advance(time.Second)
			c.expireDue()
			return f.acquire(4) != nil
		})
	}
	h.check(t)
}

// heldOf is the server-measured time an acquire was held.
func heldOf(r api.AcquireResponse) time.Duration { return r.Held.Std() }
