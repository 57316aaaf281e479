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

// TestCluster_CutOffLeaderNeverAnswersNotPaused: a leader cut off from its quorum may still
// believe it leads for a while, and meanwhile the others may elect a leader and pause. It must
// not tell an edge "not paused" from its own ledger: heartbeats and empty acquire answers confirm
// leadership with a quorum first.
func TestCluster_CutOffLeaderNeverAnswersNotPaused(t *testing.T) {
	c := testcluster.New(t, 3, testcluster.WithNetem())
	c.StartAll()
	old := c.WaitLeader()
	c.Net.Partition(old.ID)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if r, err := old.Svc.Heartbeat(ctx, api.HeartbeatRequest{Edge: "e", Region: "eu"}); err == nil {
		t.Errorf("a leader cut off from its quorum answered a heartbeat: %+v", r)
	}
	if r, err := old.Svc.Acquire(ctx, api.AcquireRequest{Edge: "e", Region: "eu", MaxNodes: 1}); err == nil && !r.Paused {
		t.Errorf("a leader cut off from its quorum answered an acquire with not paused: %+v", r)
	}
}

// TestCluster_LosingLeadershipForgetsEdgeHeartbeats: the heartbeats a leader heard are leader-only
// state; revokeLeadership clears them with the rest, so a member that leads again later does not
// report edges it heard from in an old term.
func TestCluster_LosingLeadershipForgetsEdgeHeartbeats(t *testing.T) {
	c := testcluster.New(t, 3, testcluster.WithNetem())
	c.StartAll()
	var old *testcluster.Member
	c.OnLeader("heartbeat", func(m *testcluster.Member) error {
		old = m
		_, err := m.Svc.Heartbeat(context.Background(), api.HeartbeatRequest{Edge: "e", Region: "eu"})
		return err
	})
	if len(old.Svc.Edges()) != 1 {
		t.Fatalf("edges after a heartbeat: %v", old.Svc.Edges())
	}
	c.Net.Partition(old.ID)
	testkit.WaitFor(t, testcluster.WaitLimit, "the cut-off leader to step down and forget its edges", func() bool {
		return !old.Svc.IsLeader() && len(old.Svc.Edges()) == 0
	})
}
