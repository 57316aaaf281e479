// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"crypto/tls"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/coordinator/internal/testcluster"
	"github.com/seed96588659/muster/pkg/testkit"
)

func TestCluster_RaftOverMutualTLS(t *testing.T) {
	ca := testkit.NewCA(t, "muster test ca")
	c := testcluster.New(t, 3)
	c.RaftTLS = func(id string) *tls.Config { return ca.MutualTLS(t, id) }
	c.StartAll()
	c.Register("eu", testcluster.NodeIDs("n", 10)...)
	if l := c.Acquire("edge-a", "eu", 4); l == nil || len(l.Nodes) != 4 {
		t.Fatalf("grant over TLS raft: %+v", l)
	}
	c.WaitConverged(c.Running()...)

	// A peer with a certificate from another CA is refused by the member itself.
	stranger := testkit.NewCA(t, "stranger ca").MutualTLS(t, "stranger")
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", c.Members[0].Svc.BoundRaftAddress(), stranger)
	if err == nil {
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		_, err = conn.Read(make([]byte, 1))
		conn.Close()
	}
	if err == nil {
		t.Fatal("a raft member accepted a peer whose certificate it cannot verify")
	}
}

// TestCluster_RaftRefusesACertificateOfTheCAThatIsNotAMembers: edges' and the status page's
// certificates come from the members' CA; one of them must not open the Raft port (where it
// could pose as a leader at a higher term and commit commands), and the member's log names it.
func TestCluster_RaftRefusesACertificateOfTheCAThatIsNotAMembers(t *testing.T) {
	ca := testkit.NewCA(t, "muster test ca")
	c := testcluster.New(t, 1)
	c.Logs = &testkit.LogBuffer{}
	c.RaftTLS = func(id string) *tls.Config { return ca.MutualTLS(t, id) }
	c.StartAll()
	edge := &tls.Config{Certificates: []tls.Certificate{ca.IssueClient(t, "edge-eu-1")}, RootCAs: ca.Pool, MinVersion: tls.VersionTLS13}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", c.Members[0].Svc.BoundRaftAddress(), edge)
	if err == nil {
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		_, err = conn.Read(make([]byte, 1))
		conn.Close()
	}
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the raft port accepted an edge's certificate of the members' CA (%v)", err)
	}
	testkit.WaitFor(t, testcluster.WaitLimit, "the refusal logged with the certificate's name", func() bool {
		return strings.Contains(c.Logs.String(), "edge-eu-1") && strings.Contains(c.Logs.String(), testkit.MemberName)
	})
}
