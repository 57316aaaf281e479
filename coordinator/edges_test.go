// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/internal/testcluster"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// TestCluster_HeartbeatsUnderInventedEdgeNamesAreBoundedAndExpire: an unbound edge token may name
// any edge, so a caller can send heartbeats under as many names as it likes. The leader keeps at
// most a bounded number of them, counts the names it refused, and forgets a name not heard from
// for a while, so a real edge is recorded again once the invented ones have gone quiet.
func TestCluster_HeartbeatsUnderInventedEdgeNamesAreBoundedAndExpire(t *testing.T) {
	const maxEdges, invented = coordinator.DefaultMaxEdges, coordinator.DefaultMaxEdges + 76
	c := testcluster.New(t, 1)
	c.Logs, c.LogLevel = &testkit.LogBuffer{}, slog.LevelWarn
	leader := c.StartAll()
	c.WaitLeader()
	ctx := context.Background()
	leases := testcluster.NodeIDs("lease-", 100)
	for i := range invented {
		if _, err := leader.Svc.Heartbeat(ctx, api.HeartbeatRequest{Edge: fmt.Sprintf("invented-%04d", i), Region: "eu", Leases: leases}); err != nil {
			t.Fatalf("heartbeat %d: %v", i, err)
		}
	}
	if n := len(leader.Svc.Edges()); n > maxEdges {
		t.Fatalf("the leader keeps %d edges after heartbeats under %d invented names, want at most %d", n, invented, maxEdges)
	}
	if got := metric(t, leader.Reg, "muster_coordinator_edges_refused_total", nil); got < invented-maxEdges {
		t.Errorf("muster_coordinator_edges_refused_total = %v, want at least %d", got, invented-maxEdges)
	}
	if n := strings.Count(c.Logs.String(), "not recorded"); n != 1 {
		t.Errorf("%d log lines of refused edge names during one flood, want 1:\n%s", n, c.Logs.Tail(4<<10))
	}

	// Quiet for three lease TTLs: every invented name is forgotten, and a real edge is heard.
	c.Clock.Advance(3*c.Leases.TTL + time.Second)
	if _, err := leader.Svc.Heartbeat(ctx, api.HeartbeatRequest{Edge: "edge-eu-1", Region: "eu", Leases: leases[:3]}); err != nil {
		t.Fatal(err)
	}
	edges := leader.Svc.Edges()
	if seen, ok := edges["edge-eu-1"]; len(edges) != 1 || !ok {
		t.Fatalf("after the invented names went quiet the leader keeps %d edges (edge-eu-1 among them: %t), want only edge-eu-1", len(edges), ok)
	} else if seen.Leases != 3 {
		t.Errorf("edge-eu-1 recorded with %d leases, want the count 3", seen.Leases)
	}
}
