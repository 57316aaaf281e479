// SPDX-License-Identifier: Apache-2.0

package clustersuite

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/stack/coordproc"
)

const adminToken = "clustersuite-admin-token-0123456789"

// Coordinator lease settings of the suite: a short TTL so a cut edge loses its lease within
// seconds, and a long grace so its report after the cut heals still finds the lease (the edge
// stops at ttl - margin, the leader expires at ttl + grace).
var suiteLease = coordproc.Lease{
	TTL:             6 * time.Second,
	Grace:           10 * time.Second,
	MaxWait:         2 * time.Second,
	RetryBackoff:    500 * time.Millisecond,
	RetryBackoffMax: time.Second,
	MaxAttempts:     3,
}

// edgeToken is the bearer token the coordinators bind to edge n of region.
func edgeToken(region string, n int) string { return fmt.Sprintf("token-%s-%d-0123456789", region, n) }

// cluster is three coordinator members started from the binary built for the package, with an
// admin client for all of them.
type cluster struct {
	*coordproc.Cluster
	admin *api.Client
}

// startCluster starts c1 (bootstrap), then c2 and c3 joining it, and waits for a leader of
// three; edges are the auth.edges items.
func startCluster(bin, dir string, edges []string) (*cluster, error) {
	procs, err := coordproc.Start(context.Background(), coordproc.Spec{
		Bin: bin, Dir: dir, Size: 3,
		Auth:     coordproc.Auth{AdminToken: adminToken, Edges: edges},
		Lease:    suiteLease,
		LogLevel: "info",
	})
	if err != nil {
		return nil, err
	}
	c := &cluster{Cluster: procs}
	if c.admin, err = api.NewClient(c.URLs(), api.WithToken(adminToken)); err != nil {
		return c, fmt.Errorf("admin client: %w", err)
	}
	return c, nil
}

// urls are the members' API base URLs.
func (c *cluster) urls() []string { return c.URLs() }

// nodes reads every node of region from the leader's ledger.
// waitNodesIn waits until region's ledger holds count nodes, every one in state.
func waitNodesIn(t testing.TB, ctx context.Context, region string, count int, state api.NodeState, limit time.Duration, what string) {
	t.Helper()
	testkit.WaitFor(t, limit, what, func() (bool, string) {
		ns, err := suite.cluster.nodes(ctx, region)
		if err != nil {
			return false, err.Error()
		}
		var not []string
		for id, n := range ns {
			if n.State != state {
				not = append(not, id+"="+string(n.State))
			}
		}
		return len(ns) == count && len(not) == 0, fmt.Sprintf("%d nodes, not %s: %s", len(ns), state, strings.Join(not, " "))
	})
}

func (c *cluster) nodes(ctx context.Context, region string) (map[string]api.Node, error) {
	out := map[string]api.Node{}
	after := ""
	for {
		page, err := c.admin.Nodes(ctx, api.NodeFilter{Region: region, After: after, Limit: 1000})
		if err != nil {
			return nil, err
		}
		for _, n := range page.Nodes {
			out[n.Identity] = n
		}
		if page.Next == "" {
			return out, nil
		}
		after = page.Next
	}
}
