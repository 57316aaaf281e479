// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/seed96588659/muster/pkg/api"
)

// TestStatusOutput_HasAColumnForEveryState: the per-region table shows each state the ledger
// can hold, gone included, with its count under its own heading.
func TestStatusOutput_HasAColumnForEveryState(t *testing.T) {
	st := api.StatusResponse{ID: "c1", State: "Leader", Regions: map[string]map[api.NodeState]int{
		"eu": {api.StateProvisioned: 7, api.StateAbandoned: 1, api.StateGone: 3},
	}}
	var b bytes.Buffer
	if err := printStatus(&b, st); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	head, row := strings.Fields(lines[len(lines)-2]), strings.Fields(lines[len(lines)-1])
	if len(head) != len(api.NodeStates())+1 || len(row) != len(head) {
		t.Fatalf("region table:\n%s", b.String())
	}
	for i, s := range api.NodeStates() {
		want := map[api.NodeState]string{api.StateProvisioned: "7", api.StateAbandoned: "1", api.StateGone: "3"}[s]
		if want == "" {
			want = "0"
		}
		if head[i+1] != strings.ToUpper(string(s)) || row[i+1] != want {
			t.Fatalf("column %d is %s = %s, want %s = %s:\n%s", i+1, head[i+1], row[i+1], strings.ToUpper(string(s)), want, b.String())
		}
	}
}

// TestStatusOutput_ShowsTheClusterProtocol: the operator sees the protocol the cluster runs and
// the one this member applies; a member of a build before protocols reports none and runs 1.
func TestStatusOutput_ShowsTheClusterProtocol(t *testing.T) {
	for _, tc := range []struct {
		st   api.StatusResponse
		want string
	}{
		{api.StatusResponse{ID: "c1", ClusterProtocol: 1, Protocol: 2}, "cluster protocol 1, this member applies up to 2\n"},
		{api.StatusResponse{ID: "c1"}, "cluster protocol 1 (not reported), this member applies up to 1 (not reported)\n"},
	} {
		var b bytes.Buffer
		if err := printStatus(&b, tc.st); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tc.want) {
			t.Fatalf("status output does not say %q:\n%s", tc.want, b.String())
		}
	}
}

// TestNodesHelp_NamesEveryState: the --state help lists what the filter accepts.
func TestNodesHelp_NamesEveryState(t *testing.T) {
	code, out, stderr := runCLI(t, "nodes", "--help")
	if code != 0 {
		t.Fatalf("nodes --help: %d %s", code, stderr)
	}
	for _, s := range api.NodeStates() {
		if !strings.Contains(out, string(s)) {
			t.Errorf("nodes --help does not name state %s:\n%s", s, out)
		}
	}
}

// TestStatusOutput_ShowsTheConfigurationsWarnings: what a member's configuration allows but
// exposes is in its status, one line each, so it does not hide in the start-up log.
func TestStatusOutput_ShowsTheConfigurationsWarnings(t *testing.T) {
	st := api.StatusResponse{ID: "c1", Warnings: []string{"raft.tls: off while raft.bind 0.0.0.0:7000 is not a loopback address"}}
	var b bytes.Buffer
	if err := printStatus(&b, st); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "warning: raft.tls: off while raft.bind 0.0.0.0:7000") {
		t.Fatalf("status output lacks the warning:\n%s", b.String())
	}
}

// TestStatusOutput_ShowsTheRoundTripToEachMember: the member table has the round trip the
// answering member measured to each other member, "-" for itself.
func TestStatusOutput_ShowsTheRoundTripToEachMember(t *testing.T) {
	st := api.StatusResponse{ID: "c1", State: "Leader", Members: []api.Member{
		{ID: "c1", Voter: true, Leader: true}, {ID: "c2", Voter: true, RoundTrip: api.Duration(42 * time.Millisecond)},
	}}
	var b bytes.Buffer
	if err := printStatus(&b, st); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "ROUND TRIP") || !strings.Contains(out, "42ms") {
		t.Fatalf("member table lacks the round trip:\n%s", out)
	}
}

// TestNodesOutput_SaysWhenAMemberAnsweredFromItsOwnCopy: an operator cut off from the quorum
// reads nodes and node from the local member; the text says so before anything else, with
// the member, why, how long since it heard from a leader and how far its copy goes.
func TestNodesOutput_SaysWhenAMemberAnsweredFromItsOwnCopy(t *testing.T) {
	st := &api.Staleness{Member: "c2", Reason: "no leader reachable: no leader is known", LastContact: api.Duration(12 * time.Second), AppliedIndex: 4711}
	var b bytes.Buffer
	if err := printNodes(&b, api.NodesResponse{Nodes: []api.Node{{Identity: "n1", Region: "eu", State: api.StateWaiting}}, Stale: st}); err != nil {
		t.Fatal(err)
	}
	first := strings.SplitN(b.String(), "\n", 2)[0]
	for _, want := range []string{"stale", "c2", "no leader reachable", "12s", "4711"} {
		if !strings.Contains(first, want) {
			t.Fatalf("first line %q lacks %q:\n%s", first, want, b.String())
		}
	}
	b.Reset()
	if err := printNode(&b, api.Node{Identity: "n1", Stale: st}); err != nil {
		t.Fatal(err)
	}
	if first := strings.SplitN(b.String(), "\n", 2)[0]; !strings.Contains(first, "stale") || !strings.Contains(first, "c2") {
		t.Fatalf("node: first line %q does not say it is stale:\n%s", first, b.String())
	}
	b.Reset()
	if err := printNodes(&b, api.NodesResponse{Nodes: []api.Node{{Identity: "n1"}}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "stale") {
		t.Fatalf("a leader's answer marked stale:\n%s", b.String())
	}
}

// TestNodesOutput_NodeTextCannotControlTheTerminal: a node's error text and versions may come
// from whatever answered on the provisioning broker (and a ledger written before the API refused
// them may hold them raw); printed, they must not carry escape sequences or other control
// characters to the operator's terminal.
func TestNodesOutput_NodeTextCannotControlTheTerminal(t *testing.T) {
	evil := "jwt failed: \x1b]0;owned\x07\x1b[2J\rcleared\tscreen\x00"
	n := api.Node{Identity: "n1", Region: "eu", State: api.StateWaiting, LastError: evil, InventoryVersion: evil, TargetVersion: evil,
		History: []api.Transition{{To: api.StateWaiting, Error: evil}}}
	var b strings.Builder
	if err := printNodes(&b, api.NodesResponse{Nodes: []api.Node{n}}); err != nil {
		t.Fatal(err)
	}
	if err := printNode(&b, n); err != nil {
		t.Fatal(err)
	}
	if err := printPause(&b, api.PauseResponse{Paused: true, Reason: evil}); err != nil {
		t.Fatal(err)
	}
	for _, r := range b.String() {
		if r != '\n' && unicode.IsControl(r) {
			t.Fatalf("output carries control character %q:\n%q", r, b.String())
		}
	}
	// Escaped as the API escapes it (api.Printable), so the operator reads what the node sent.
	if !strings.Contains(b.String(), `\x1b]0;owned\a\x1b[2J\rcleared`) {
		t.Fatalf("output does not show the node's text escaped:\n%s", b.String())
	}
}

// TestNodeOutput_TheDetailViewPrintsTheWholeError: node's detail view and a refusal of an
// operator verb print the whole (escaped) text, however long: the end of a refusal says when the
// verb may be tried again. The nodes table may shorten its column.
func TestNodeOutput_TheDetailViewPrintsTheWholeError(t *testing.T) {
	long := "configure failed: " + strings.Repeat("the helper wrote a long explanation; ", 6) + "\x1b[2J and it ends HERE"
	refusal := "inside go-choria's provisioning lock of edge-eu-1 (" + strings.Repeat("lock window held; ", 6) + "): retry forget after 2030-01-01T00:02:00Z"
	n := api.Node{Identity: "n1", Region: "eu", State: api.StateWaiting, LastError: long,
		History: []api.Transition{{To: api.StateWaiting, Error: long}}}
	var b strings.Builder
	if err := printNode(&b, n); err != nil {
		t.Fatal(err)
	}
	want := api.Printable(long)
	if got := strings.Count(b.String(), want); got != 2 {
		t.Errorf("node shows the whole error %d times, want 2 (last error and history):\n%s", got, b.String())
	}
	b.Reset()
	if err := printOperator(&b, api.VerbForget, api.OperatorResponse{Rejected: []api.RejectedResult{{Identity: "n1", Reason: refusal}}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "retry forget after 2030-01-01T00:02:00Z") {
		t.Errorf("the refusal lost when forget may be retried:\n%s", b.String())
	}
}
