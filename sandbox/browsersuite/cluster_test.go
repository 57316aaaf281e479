// SPDX-License-Identifier: Apache-2.0

package browsersuite

import (
	"context"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/sandbox/stack/coordproc"
)

const (
	edgeToken  = "browsersuite-edge-token-0123456789"
	adminToken = "browsersuite-admin-token-0123456789"
)

// leaderTimeout bounds every wait for a leader of the suite.
const leaderTimeout = 60 * time.Second

// cluster is coordinator members started by a test and stopped by its cleanup.
type cluster struct {
	t *testing.T
	*coordproc.Cluster
}

// startCluster starts c1, which bootstraps and leads alone, then the others, which join it,
// and waits for a leader of all n.
func startCluster(t *testing.T, n int) (*cluster, api.StatusResponse) {
	t.Helper()
	procs, err := coordproc.Start(context.Background(), coordproc.Spec{
		Bin: suite.coordinator, Dir: t.TempDir(), Size: n,
		Auth:                coordproc.Auth{AdminToken: adminToken, EdgeTokens: []string{edgeToken}},
		Lease:               coordproc.Lease{TTL: 30 * time.Second, MaxWait: 5 * time.Second},
		JoinAfterFirstLeads: true,
		LeaderTimeout:       leaderTimeout,
	})
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, Cluster: procs}
	t.Cleanup(c.stop)
	return c, c.waitLeader(n, "")
}

// stop ends every member; a member that does not end cleanly fails the test.
func (c *cluster) stop() {
	if err := c.Stop(); err != nil {
		c.t.Errorf("stop coordinators: %v", err)
	}
	if c.t.Failed() {
		c.t.Logf("members' logs (tails):\n%s", c.Logs(4000))
	}
}

// kill sends SIGKILL to a member and waits for it to exit.
func (c *cluster) kill(m *coordproc.Member) {
	if err := m.Kill(); err != nil {
		c.t.Fatal(err)
	}
}

// member is the member with id; an unknown id fails the test.
func (c *cluster) member(id string) *coordproc.Member {
	m := c.Member(id)
	if m == nil {
		c.t.Fatalf("no member %q", id)
	}
	return m
}

// client is an API client for every member, with the given token.
func (c *cluster) client(token string) *api.Client {
	cl, err := api.NewClient(c.URLs(), api.WithToken(token), api.WithRetryDelay(100*time.Millisecond))
	if err != nil {
		c.t.Fatal(err)
	}
	return cl
}

// waitLeader waits for a ready leader (not `not`) of want members and returns its status.
func (c *cluster) waitLeader(want int, not string) api.StatusResponse {
	c.t.Helper()
	_, st, err := c.WaitLeader(context.Background(), want, not)
	if err != nil {
		c.t.Fatal(err)
	}
	return st
}
