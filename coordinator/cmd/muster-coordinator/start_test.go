// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/seed96588659/muster/coordinator/raftnode"
	"github.com/seed96588659/muster/pkg/api"
)

// TestExpectView decides one round of bootstrap_expect answers: join as soon as a target is in
// a cluster, bootstrap only with all n heard and none in one, wait otherwise, and bootstrap
// beside a member that bootstrapped the same n and has nothing more (joining it would leave it
// no voter to elect it).
func TestExpectView(t *testing.T) {
	self := raftnode.Peer{ID: "c1", Address: "10.0.0.1:7000"}
	fresh := func(id, addr string) targetAnswer {
		return targetAnswer{target: "https://" + id, st: api.StatusResponse{ID: id, RaftAddress: addr}}
	}
	silent := func(id string) targetAnswer {
		return targetAnswer{target: "https://" + id, err: errors.New("connection refused")}
	}
	three := []api.Member{
		{ID: "c1", RaftAddress: "10.0.0.1:7000", Voter: true},
		{ID: "c2", RaftAddress: "10.0.0.2:7000", Voter: true},
		{ID: "c3", RaftAddress: "10.0.0.3:7000", Voter: true},
	}
	bootstrapped := func(id, addr string, members []api.Member) targetAnswer {
		a := fresh(id, addr)
		a.st.Members, a.st.LastIndex = members, 1
		return a
	}
	inCluster := fresh("c2", "10.0.0.2:7000")
	inCluster.st.LeaderID, inCluster.st.AppliedIndex, inCluster.st.LastIndex, inCluster.st.ClusterID = "c3", 40, 41, "abc"
	named := fresh("c2", "10.0.0.2:7000")
	named.st.ClusterID = "abc"

	cases := []struct {
		name    string
		n       int
		answers []targetAnswer
		want    string // join, bootstrap, wait, or error text
	}{
		{"all three fresh", 3, []targetAnswer{fresh("c1", self.Address), fresh("c2", "10.0.0.2:7000"), fresh("c3", "10.0.0.3:7000")}, "bootstrap"},
		{"one in a cluster", 3, []targetAnswer{fresh("c3", "10.0.0.3:7000"), inCluster}, "join"},
		{"one names a cluster", 3, []targetAnswer{fresh("c3", "10.0.0.3:7000"), named}, "join"},
		{"one in a cluster, the other silent", 3, []targetAnswer{silent("c3"), inCluster}, "join"},
		{"two silent", 3, []targetAnswer{silent("c2"), silent("c3")}, "wait"},
		{"one silent", 3, []targetAnswer{fresh("c2", "10.0.0.2:7000"), silent("c3")}, "wait"},
		{"one bootstrapped the same three", 3, []targetAnswer{bootstrapped("c2", "10.0.0.2:7000", three), fresh("c3", "10.0.0.3:7000")}, "bootstrap"},
		{"one bootstrapped other members", 3, []targetAnswer{bootstrapped("c2", "10.0.0.2:7000", three[1:]), fresh("c3", "10.0.0.3:7000")}, "join"},
		{"one bootstrapped the same three, the other silent", 3, []targetAnswer{bootstrapped("c2", "10.0.0.2:7000", three), silent("c3")}, "wait"},
		{"a build without its raft address", 3, []targetAnswer{fresh("c2", ""), fresh("c3", "10.0.0.3:7000")}, "wait"},
		{"more than expected", 2, []targetAnswer{fresh("c2", "10.0.0.2:7000"), fresh("c3", "10.0.0.3:7000")}, "must name the 2 members"},
		{"one id at two addresses", 3, []targetAnswer{fresh("c2", "10.0.0.2:7000"), fresh("c2", "10.0.0.9:7000")}, "two Raft addresses"},
		{"alone, expecting one", 1, nil, "bootstrap"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := expectView(self, c.n, c.answers)
			var got string
			switch {
			case d.err != nil:
				got = d.err.Error()
			case d.cluster != "":
				got = "join"
			case d.peers != nil:
				got = "bootstrap"
				if len(d.peers) != c.n || d.peers[0] != self {
					t.Errorf("bootstrap with %v", d.peers)
				}
			default:
				got = "wait"
			}
			if !strings.Contains(got, c.want) {
				t.Fatalf("got %s, want %s (%+v)", got, c.want, d)
			}
		})
	}
}
