// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/internal/testcluster"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// firstSeenRefused sums muster_coordinator_first_seen_refused_total over the running members.
func firstSeenRefused(t *testing.T, c *testcluster.Cluster) float64 {
	t.Helper()
	sum := 0.0
	for _, m := range c.Running() {
		families, err := m.Reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			if f.GetName() == "muster_coordinator_first_seen_refused_total" {
				for _, s := range f.GetMetric() {
					sum += s.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

// TestService_FirstSeenNodesAreCappedPerRegion: a rogue answering discovery for invented
// identities fills a region's ledger no further than register.max_first_seen first-seen nodes
// (waiting, never leased). New identities beyond it are refused by name, with the region and the
// cap; known nodes and other regions are not; a leased node frees its place; concurrent
// registers never pass the cap; the refusals are counted and logged once, not per identity.
func TestService_FirstSeenNodesAreCappedPerRegion(t *testing.T) {
	c := testcluster.New(t, 3)
	c.Logs, c.LogLevel = &testkit.LogBuffer{}, slog.LevelWarn
	c.EditConfig = func(cfg *coordinator.Config) { cfg.MaxFirstSeen = 5 }
	c.StartAll()

	r := c.Register("eu", testcluster.NodeIDs("fake-", 8)...)
	if r.Added != 5 || len(r.Rejected) != 3 {
		t.Fatalf("8 new identities under a cap of 5: added %d, rejected %+v", r.Added, r.Rejected)
	}
	for _, rej := range r.Rejected {
		if !strings.Contains(rej.Reason, "region eu") || !strings.Contains(rej.Reason, "5 first-seen") || !strings.Contains(rej.Reason, "register.max_first_seen") {
			t.Fatalf("refusal of %s says %q: want the region, the cap and its key", rej.Identity, rej.Reason)
		}
	}
	// The five known ones are unchanged, never refused; the three new ones still are.
	r = c.Register("eu", testcluster.NodeIDs("fake-", 8)...)
	if r.Unchanged != 5 || len(r.Rejected) != 3 {
		t.Fatalf("the same 8 again: unchanged %d, rejected %+v", r.Unchanged, r.Rejected)
	}
	if r := c.Register("us", testcluster.NodeIDs("us-", 5)...); r.Added != 5 || len(r.Rejected) != 0 {
		t.Fatalf("another region's 5: added %d, rejected %+v", r.Added, r.Rejected)
	}
	// Two leased: two places free.
	if l := c.Acquire("edge-a", "eu", 2); l == nil || len(l.Nodes) != 2 {
		t.Fatalf("acquire 2 in eu: %+v", l)
	}
	r = c.Register("eu", testcluster.NodeIDs("fake-", 8)...)
	if r.Added != 2 || len(r.Rejected) != 1 {
		t.Fatalf("after two were leased: added %d, rejected %+v", r.Added, r.Rejected)
	}

	// Concurrent registers of new identities in a fresh region never pass the cap together.
	var wg sync.WaitGroup
	var mu sync.Mutex
	added := 0
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := api.RegisterRequest{Region: "ap", Edge: "edge-a"}
			for i := range 3 {
				req.Nodes = append(req.Nodes, api.RegisterNode{Identity: fmt.Sprintf("ap-%d-%d", g, i)})
			}
			_, svc := c.Leader()
			if svc == nil {
				return
			}
			resp, err := svc.Register(context.Background(), req)
			if err != nil {
				return
			}
			mu.Lock()
			added += resp.Added
			mu.Unlock()
		}()
	}
	wg.Wait()
	if added > 5 {
		t.Fatalf("concurrent registers added %d first-seen nodes in ap, over the cap of 5", added)
	}
	if got := firstSeenRefused(t, c); got < 3+3+1 {
		t.Fatalf("muster_coordinator_first_seen_refused_total %v, want at least 7", got)
	}
	if n := strings.Count(c.Logs.String(), "refused new identities"); n != 1 {
		t.Fatalf("%d log lines of refused identities, want 1 (once a minute):\n%s", n, c.Logs.Tail(4<<10))
	}
}
