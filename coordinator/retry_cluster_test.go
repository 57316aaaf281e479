// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/seed96588659/muster/pkg/api"
)

// TestCluster_RetryAndTheFailureIndexReplicateToEveryMember: in a real 3-member loopback cluster,
// gone results fill every member's failure index identically, a retry on the leader moves the
// nodes back to waiting on every member, and the ledgers (failure index included) stay identical.
func TestCluster_RetryAndTheFailureIndexReplicateToEveryMember(t *testing.T) {
	c := newCluster(t, 3, false)
	c.startAll()
	ids := nodeIDs("node-", 5)
	c.register("eu", ids...)
	ls := c.acquire("edge-a", "eu", 5)
	if ls == nil || len(ls.Nodes) != 5 {
		t.Fatalf("acquire: %+v", ls)
	}
	results := []api.NodeResult{}
	for _, id := range ls.Nodes[:3] {
		results = append(results, api.NodeResult{Identity: id, Outcome: api.OutcomeGone, Error: "not in provisioning mode"})
	}
	c.onLeader("report", func(m *member) error {
		_, err := m.svc.Report(context.Background(), api.ReportRequest{LeaseID: ls.ID, Token: ls.Token, Edge: "edge-a", Region: "eu", Results: results})
		return err
	})
	c.waitConverged(c.running()...)
	var want api.FailuresResponse
	for i, m := range c.running() {
		got, err := m.svc.Failures(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			want = got
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s's failures differ:\n%+v\n%+v", m.id, got, want)
		}
	}
	if len(want.Failures) != 3 || want.Failures[0].Identity != ls.Nodes[2] || want.Failures[0].State != api.StateGone {
		t.Fatalf("failures: %+v", want)
	}

	var res api.RetryResponse
	c.onLeader("retry", func(m *member) error {
		var err error
		res, err = m.svc.Retry(context.Background(), api.RetryRequest{Region: "eu", State: api.StateGone})
		return err
	})
	if len(res.Nodes) != 3 || len(res.Skipped) != 0 {
		t.Fatalf("retry: %+v", res)
	}
	c.waitConverged(c.running()...)
	for _, m := range c.running() {
		for _, id := range ls.Nodes[:3] {
			n, err := m.svc.Node(context.Background(), id)
			if err != nil || n.State != api.StateWaiting || n.Attempts != 0 {
				t.Errorf("%s on %s after retry: %+v %v", id, m.id, n, err)
			}
		}
		for _, id := range ls.Nodes[3:] {
			if n, _ := m.svc.Node(context.Background(), id); n.State != api.StateLeased {
				t.Errorf("%s on %s is %s, want still leased", id, m.id, n.State)
			}
		}
	}
	// The retried nodes are granted again, to another edge once the lock window has passed.
	c.clock.Advance(c.leases.Policy.LockWindow)
	if again := c.acquire("edge-b", "eu", 5); again == nil || len(again.Nodes) != 3 {
		t.Errorf("acquire after retry: %+v", again)
	}
}
