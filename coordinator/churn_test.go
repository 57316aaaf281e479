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

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/pkg/api"
)

// TestCluster_NoDoubleGrantUnderChurn runs edges that acquire (some retrying with the same request
// id later, as after a lost answer), renew, report failures and drop leases while the test moves
// the clock and stops and restarts leaders. Afterwards every node's full history is checked: a
// lease may only have been expired at or after the latest expiry its edge was ever told, or counts
// from when it sent a retry, plus the grace, so no edge ever held a node another edge was granted.
func TestCluster_NoDoubleGrantUnderChurn(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	c := newCluster(t, 3, false)
	c.leases.Policy.MaxAttempts = 1 << 20
	c.leases.Policy.HistoryLimit = 100000
	c.leases.Policy.LockWindow = 3 * time.Second
	c.startAll()
	c.register("eu", nodeIDs("n", 60)...)

	var (
		mu     sync.Mutex
		known  = map[uint64]time.Time{} // token -> latest expires_at an edge was told
		grants atomic.Int64
		stop   = make(chan struct{})
		wg     sync.WaitGroup
	)
	// holdsUntil records that an edge counts the lease of token valid until at least until.
	holdsUntil := func(token uint64, until time.Time) {
		mu.Lock()
		defer mu.Unlock()
		if until.After(known[token]) {
			known[token] = until
		}
	}
	tell := func(l *api.Lease) { holdsUntil(l.Token, l.ExpiresAt) }
	ctx := context.Background()
	for e := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(e), 1))
			edge := fmt.Sprintf("edge-%d", e)
			requests := 0
			step := func() {
				l := c.leaderOrNil()
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
				r, err := l.Acquire(ctx, req)
				if err != nil || r.Lease == nil {
					return
				}
				tell(r.Lease)
				grants.Add(1)
				if req.RequestID != "" && rng.IntN(2) == 0 {
					// The answer was lost: the edge asks again later than the grace, perhaps of
					// a new leader, with the same request id, and counts the lease it gets from
					// this later send.
					c.clock.Advance(c.leases.Grace + time.Second)
					sent := c.clock.Now()
					if l2 := c.leaderOrNil(); l2 != nil {
						if r2, err := l2.Acquire(ctx, req); err == nil && r2.Lease != nil {
							tell(r2.Lease)
							holdsUntil(r2.Lease.Token, sent.Add(c.leases.TTL))
							r = r2
						}
					}
				}
				switch rng.IntN(3) {
				case 0: // the edge goes quiet; the lease must run out
				case 1:
					if rr, err := l.Renew(ctx, api.RenewRequest{LeaseID: r.Lease.ID, Token: r.Lease.Token}); err == nil {
						tell(&rr.Lease)
					}
					fallthrough
				default:
					rep := api.ReportRequest{LeaseID: r.Lease.ID, Token: r.Lease.Token}
					for _, id := range r.Lease.Nodes {
						rep.Results = append(rep.Results, api.NodeResult{Identity: id, Outcome: api.OutcomeFailed, Error: "churn"})
					}
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
		waitFor(t, "edges to make progress", func() bool {
			c.clock.Advance(2 * time.Second)
			return grants.Load() >= target
		})
		old := c.waitLeader()
		c.stop(old)
		c.waitLeader()
		c.start(old, false)
		t.Logf("round %d: %d grants so far", round, grants.Load())
	}
	target := grants.Load() + 15
	waitFor(t, "edges to make progress after the last failover", func() bool {
		c.clock.Advance(2 * time.Second)
		return grants.Load() >= target
	})
	close(stop)
	wg.Wait()
	c.waitConverged(c.running()...)

	grace := c.leases.Grace
	ttl := c.leases.TTL
	nodes, _, err := c.waitLeader().svc.Ledger().Nodes(ledger.NodeFilter{WithHistory: true, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	expiries := 0
	for _, n := range nodes {
		grantedAt := map[uint64]time.Time{}
		for _, tr := range n.History {
			if tr.To == api.StateLeased {
				grantedAt[tr.LeaseToken] = tr.At
			}
			if tr.From != api.StateLeased || !strings.HasPrefix(tr.Reason, "lease expired") {
				continue
			}
			expiries++
			mu.Lock()
			told, ok := known[tr.LeaseToken]
			mu.Unlock()
			if !ok {
				told = grantedAt[tr.LeaseToken].Add(ttl) // a grant whose answer was lost in a failover
			}
			if tr.At.Before(told.Add(grace)) {
				t.Fatalf("node %s: lease token %d expired at %s, but its edge counts it held until %s (grace %s)", n.Identity, tr.LeaseToken, tr.At, told, grace)
			}
		}
	}
	if expiries == 0 || grants.Load() < 50 {
		t.Fatalf("churn too weak to prove anything: %d grants, %d expiries", grants.Load(), expiries)
	}
	t.Logf("%d grants, %d expiries checked", grants.Load(), expiries)
}

// leaderOrNil returns the established leader's service if exactly one member claims to lead.
func (c *cluster) leaderOrNil() *coordinator.Service {
	var l *coordinator.Service
	for _, m := range c.running() {
		if svc := m.service(); svc != nil && svc.IsLeader() {
			if l != nil {
				return nil
			}
			l = svc
		}
	}
	return l
}
