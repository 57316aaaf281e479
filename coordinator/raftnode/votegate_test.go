// SPDX-License-Identifier: Apache-2.0

package raftnode

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"
)

// TestVoteGate_PromotedIn is the rule by which a learner opens its own gate when its promotion's
// answer was lost: named a non-voter at since > 0, entries through since applied, and a voter
// entry of its own id and address in a later configuration.
func TestVoteGate_PromotedIn(t *testing.T) {
	const id, addr = raft.ServerID("c3"), raft.ServerAddress("127.0.0.1:7003")
	conf := func(s raft.Server) raft.Configuration {
		return raft.Configuration{Servers: []raft.Server{{ID: "c1", Address: "127.0.0.1:7001", Suffrage: raft.Voter}, s}}
	}
	voter := conf(raft.Server{ID: id, Address: addr, Suffrage: raft.Voter})
	for _, tc := range []struct {
		name                string
		conf                raft.Configuration
		idx, since, applied uint64
		want                bool
	}{
		{"promoted after since, since applied", voter, 12, 10, 10, true},
		{"never named a non-voter: a configuration from before the wipe lists it", voter, 12, 0, 12, false},
		{"entries through since not applied", voter, 12, 10, 9, false},
		{"voter configuration not after since", voter, 10, 10, 12, false},
		{"still a non-voter", conf(raft.Server{ID: id, Address: addr, Suffrage: raft.Nonvoter}), 12, 10, 12, false},
		{"voter under another address", conf(raft.Server{ID: id, Address: "127.0.0.1:9999", Suffrage: raft.Voter}), 12, 10, 12, false},
		{"absent", conf(raft.Server{ID: "c4", Address: addr, Suffrage: raft.Voter}), 12, 10, 12, false},
	} {
		if got := promotedIn(tc.conf, tc.idx, id, addr, tc.since, tc.applied); got != tc.want {
			t.Errorf("%s: promotedIn = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestVoteGate_FreshStartForgetsAnEarlierSince: a learner file that outlived raft.db names an
// earlier incarnation; its since must not open the gate of a member that starts without state.
func TestVoteGate_FreshStartForgetsAnEarlierSince(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, learnerFile), []byte(`{"since":42}`), 0o600); err != nil {
		t.Fatal(err)
	}
	g, err := openVoteGate("c3", dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if !g.closed.Load() || g.since() != 0 {
		t.Fatalf("fresh start over an old learner file: closed %v, since %d; want closed, since 0", g.closed.Load(), g.since())
	}
	if g, err = openVoteGate("c3", dir, false); err != nil {
		t.Fatal(err)
	}
	if !g.closed.Load() || g.since() != 0 {
		t.Fatalf("restart: closed %v, since %d; want closed, since 0", g.closed.Load(), g.since())
	}
}
