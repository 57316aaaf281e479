// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed96588659/muster/coordinator/internal/testcluster"
	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// TestCluster_NoDoubleGrantUnderChurn runs edges that acquire (some retrying with the same request
// id later, as after a lost answer), renew, report failures and drop leases while the test moves
// real time, steps the leader's wall clock both ways and stops and restarts leaders; the members'
// wall clocks are skewed by minutes and drift. Every acknowledged grant and renew is an interval
// during which its edge may act on the lease's nodes, by its own count (send + held + ttl); a
// report ends it for the reported nodes. Afterwards no two leases' intervals may overlap on any
// node: a grant that took a node another edge still counted as its own fails the test.
func TestCluster_NoDoubleGrantUnderChurn(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	c := testcluster.New(t, 3)
	c.Leases.Policy.MaxAttempts = 1 << 20
	c.Leases.Policy.HistoryLimit = 100000
	c.Leases.Policy.LockWindow = 3 * time.Second
	c.MemberClock("c2", 45*time.Second, 2e-4)
	c.MemberClock("c3", -45*time.Second, -2e-4)
	c.StartAll()
	c.Register("eu", testcluster.NodeIDs("n", 60)...)

	h := newHolds(0)
	var (
		grants atomic.Int64
		stop   = make(chan struct{})
		wg     sync.WaitGroup
	)
	real := func() time.Duration { return c.Clock.World().Real() }
	ctx := context.Background()
	for e := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(e), 1))
			edge := fmt.Sprintf("edge-%d", e)
			requests := 0
			step := func() {
				_, l := c.Leader()
				if l == nil {
					return
				}
				// Like a real client, every call has a deadline.
				ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				req := api.AcquireRequest{Edge: edge, Region: "eu", MaxNodes: 4, Wait: api.Duration(20 * time.Millisecond)}
				if rng.IntN(3) == 0 {
					requests++
					req.RequestID = fmt.Sprintf("%s-%d", edge, requests)
				}
				sent := real()
				r, err := l.Acquire(ctx, req)
				if err != nil || r.Lease == nil {
					return
				}
				h.acked(r.Lease, sent, real(), heldOf(r))
				grants.Add(1)
				if req.RequestID != "" && rng.IntN(2) == 0 {
					// The answer was lost: the edge asks again later than the grace, perhaps of
					// a new leader, with the same request id, and counts the lease it gets from
					// this later send.
					c.Clock.Advance(c.Leases.Grace + time.Second)
					if _, l2 := c.Leader(); l2 != nil {
						sent := real()
						if r2, err := l2.Acquire(ctx, req); err == nil && r2.Lease != nil {
							h.acked(r2.Lease, sent, real(), heldOf(r2))
							r = r2
						}
					}
				}
				ref := api.RenewRequest{LeaseID: r.Lease.ID, Token: r.Lease.Token, Edge: edge, Region: "eu"}
				switch rng.IntN(3) {
				case 0: // the edge goes quiet; the lease must run out
				case 1:
					sent := real()
					if rr, err := l.Renew(ctx, ref); err == nil {
						h.acked(&rr.Lease, sent, real(), 0)
					}
					fallthrough
				default:
					rep := api.ReportRequest{LeaseID: ref.LeaseID, Token: ref.Token, Edge: edge, Region: "eu"}
					for _, id := range r.Lease.Nodes {
						rep.Results = append(rep.Results, api.NodeResult{Identity: id, Outcome: api.OutcomeFailed, Error: "churn"})
					}
					// From this send on, the edge acts on these nodes no more.
					h.released(ref.Token, r.Lease.Nodes, real())
					l.Report(ctx, rep)
				}
			}
			for {
				select {
				case <-stop:
					return
				default:
				}
				step()
			}
		}()
	}

	for round := range 3 {
		target := grants.Load() + 15
		testkit.WaitFor(t, testcluster.WaitLimit, "edges to make progress", func() bool {
			c.Clock.Advance(2 * time.Second)
			return grants.Load() >= target
		})
		old := c.WaitLeader()
		// The leader's wall clock jumps by more than a TTL, forwards or backwards, right
		// before it fails over.
		c.ClockOf(old).Step(time.Duration(1-2*(round%2)) * 2 * time.Minute)
		c.Clock.Advance(time.Second)
		c.Stop(old)
		c.WaitLeader()
		c.Start(old, false)
		t.Logf("round %d: %d grants so far", round, grants.Load())
	}
	target := grants.Load() + 15
	testkit.WaitFor(t, testcluster.WaitLimit, "edges to make progress after the last failover", func() bool {
		c.Clock.Advance(2 * time.Second)
		return grants.Load() >= target
	})
	close(stop)
	wg.Wait()
	c.WaitConverged(c.Running()...)

	nodes, _, err := c.WaitLeader().Svc.Ledger().Nodes(ledger.NodeFilter{WithHistory: true, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	expiries := 0
	for _, n := range nodes {
		for _, tr := range n.History {
			if tr.From == api.StateLeased && strings.HasPrefix(tr.Reason, "lease expired") {
				expiries++
			}
		}
	}
	acks := h.check(t)
	for _, id := range h.conflicted {
		for _, n := range nodes {
			if n.Identity == id {
				for _, tr := range n.History {
					t.Logf("%s: %s %s>%s %q edge %s lease %s token %d", id, tr.At.Format("15:04:05.000"), tr.From, tr.To, tr.Reason, tr.Edge, tr.LeaseID, tr.LeaseToken)
				}
			}
		}
	}
	if expiries == 0 || grants.Load() < 50 {
		t.Fatalf("churn too weak to prove anything: %d grants, %d expiries", grants.Load(), expiries)
	}
	t.Logf("%d grants, %d expiries, %d acknowledged grants and renewals checked", grants.Load(), expiries, acks)
}
