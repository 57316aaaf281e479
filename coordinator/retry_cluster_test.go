// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/seed96588659/muster/coordinator/internal/testcluster"
	"github.com/seed96588659/muster/pkg/api"
)

// TestCluster_RetryAndTheFailureIndexReplicateToEveryMember: in a real 3-member loopback cluster,
// gone results fill every member's failure index identically, a retry on the leader moves the
// nodes back to waiting on every member, and the ledgers (failure index included) stay identical.
func TestCluster_RetryAndTheFailureIndexReplicateToEveryMember(t *testing.T) {
	c := testcluster.New(t, 3)
	c.StartAll()
	ids := testcluster.NodeIDs("node-", 5)
	c.Register("eu", ids...)
	ls := c.Acquire("edge-a", "eu", 5)
	if ls == nil || len(ls.Nodes) != 5 {
		t.Fatalf("acquire: %+v", ls)
	}
	results := []api.NodeResult{}
	for _, id := range ls.Nodes[:3] {
		results = append(results, api.NodeResult{Identity: id, Outcome: api.OutcomeGone, Error: "not in provisioning mode"})
	}
	c.Report(api.ReportRequest{LeaseID: ls.ID, Token: ls.Token, Edge: "edge-a", Region: "eu", Results: results})
	c.WaitConverged(c.Running()...)
	var want api.FailuresResponse
	for i, m := range c.Running() {
		got, err := m.Svc.Failures(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			want = got
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s's failures differ:\n%+v\n%+v", m.ID, got, want)
		}
	}
	if len(want.Failures) != 3 || want.Failures[0].Identity != ls.Nodes[2] || want.Failures[0].State != api.StateGone {
		t.Fatalf("failures: %+v", want)
	}

	var res api.RetryResponse
	c.OnLeader("retry", func(m *testcluster.Member) error {
		var err error
		res, err = m.Svc.Retry(context.Background(), api.RetryRequest{Region: "eu", State: api.StateGone})
		return err
	})
	if len(res.Nodes) != 3 || len(res.Skipped) != 0 {
		t.Fatalf("retry: %+v", res)
	}
	c.WaitConverged(c.Running()...)
	for _, m := range c.Running() {
		for _, id := range ls.Nodes[:3] {
			n, err := m.Svc.Node(context.Background(), id)
			if err != nil || n.State != api.StateWaiting || n.Attempts != 0 {
				t.Errorf("%s on %s after retry: %+v %v", id, m.ID, n, err)
			}
		}
		for _, id := range ls.Nodes[3:] {
			if n, _ := m.Svc.Node(context.Background(), id); n.State != api.StateLeased {
				t.Errorf("%s on %s is %s, want still leased", id, m.ID, n.State)
			}
		}
	}
	// The retried nodes are granted again, to another edge once the lock window has passed.
	c.Clock.Advance(c.Leases.Policy.LockWindow)
	if again := c.Acquire("edge-b", "eu", 5); again == nil || len(again.Nodes) != 3 {
		t.Errorf("acquire after retry: %+v", again)
	}
}
