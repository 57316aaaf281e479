// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/seed96588659/muster/coordinator/internal/testutil"
)

func TestCluster_RaftOverMutualTLS(t *testing.T) {
	ca := testutil.NewCA(t, "muster test ca")
	c := newCluster(t, 3, false)
	c.raftTLS = func(id string) *tls.Config { return ca.MutualTLS(t, id) }
	c.startAll()
	c.register("eu", nodeIDs("n", 10)...)
	if l := c.acquire("edge-a", "eu", 4); l == nil || len(l.Nodes) != 4 {
		t.Fatalf("grant over TLS raft: %+v", l)
	}
	c.waitConverged(c.running()...)

	// A peer with a certificate from another CA is refused by the member itself.
	stranger := testutil.NewCA(t, "stranger ca").MutualTLS(t, "stranger")
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", c.members[0].svc.BoundRaftAddress(), stranger)
	if err == nil {
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		_, err = conn.Read(make([]byte, 1))
		conn.Close()
	}
	if err == nil {
		t.Fatal("a raft member accepted a peer whose certificate it cannot verify")
	}
}
