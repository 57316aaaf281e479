// SPDX-License-Identifier: Apache-2.0

package plan

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge/helper"
	"github.com/seed96588659/muster/edge/upgrade"
	"github.com/seed96588659/muster/pkg/api"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs (go test -run %s -update rewrites it)\ngot:\n%s\nwant:\n%s", path, t.Name(), got, want)
	}
}

// clusterReport is a cluster-mode plan of five nodes, one of each kind of answer.
func clusterReport() *Report {
	at := time.Date(2026, 12, 8, 1, 30, 0, 0, time.UTC)
	s := upgrade.Settings{Enabled: true, Repository: "http://repo"}
	nodes := []Node{
		decide(s, facts{identity: "n1", inv: inventory("0.30.0", true), asked: true, answer: configured("0.30.0")}),
		decide(s, facts{identity: "n2", inv: inventory("0.29.4", true), asked: true, answer: configured("0.30.0")}),
		decide(s, facts{identity: "n3", inv: inventory("0.29.4", true), asked: true, answer: &helper.Response{Defer: true, Msg: "n3 matches --defer"}}),
		decide(s, facts{identity: "n4", inv: inventory("0.29.4", true), asked: true, answer: &helper.Response{Shutdown: true, Msg: "n4 matches --shutdown"}}),
		decide(s, facts{identity: "n5", inv: inventory("0.29.4", true), asked: true, answer: configured("")}),
	}
	ledger := map[string]*api.Node{
		"n2": {Identity: "n2", Region: "eu", State: api.StateWaiting},
		"n3": {Identity: "n3", Region: "eu", State: api.StateProvisioned, FinishedAt: at.Add(-time.Hour)},
		"n5": {Identity: "n5", Region: "eu", State: api.StateLeased, Edge: "edge-eu-2", LeaseToken: 41},
	}
	for i := range nodes {
		nodes[i].Cluster = view(ledger[nodes[i].Identity], "eu", at)
		if !nodes[i].Cluster.Offered {
			nodes[i].Action, nodes[i].Reason = Skip, "the cluster would not offer it (its view below)"
		}
	}
	return &Report{Site: "eu", Region: "eu", Edge: "edge-eu-1", Mode: ModeCluster, At: at, HelperAsked: true, Ledger: "read",
		Nodes: nodes, Summary: summarize(nodes)}
}

// TestReport_TextIsStable: the text plan of a cluster edge, byte for byte.
func TestReport_TextIsStable(t *testing.T) {
	var b bytes.Buffer
	if err := clusterReport().WriteText(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "cluster.txt", b.Bytes())
}

// TestReport_JSONIsStable: the JSON plan of a cluster edge, byte for byte.
func TestReport_JSONIsStable(t *testing.T) {
	var b bytes.Buffer
	if err := clusterReport().WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "cluster.json", b.Bytes())
}

// TestView_SaysWhatTheClusterWouldDo: each ledger state is offered or not as the coordinators'
// rules have it.
func TestView_SaysWhatTheClusterWouldDo(t *testing.T) {
	now := time.Date(2026, 12, 8, 1, 0, 0, 0, time.UTC)
	cases := []struct {
		name    string
		n       *api.Node
		offered bool
	}{
		{"new", nil, true},
		{"waiting", &api.Node{Region: "eu", State: api.StateWaiting}, true},
		{"leased", &api.Node{Region: "eu", State: api.StateLeased, Edge: "e2"}, false},
		{"provisioned", &api.Node{Region: "eu", State: api.StateProvisioned}, true},
		{"deferred until later", &api.Node{Region: "eu", State: api.StateDeferred, NotBefore: now.Add(time.Minute)}, false},
		{"deferred until earlier", &api.Node{Region: "eu", State: api.StateDeferred, NotBefore: now.Add(-time.Minute)}, true},
		{"abandoned", &api.Node{Region: "eu", State: api.StateAbandoned}, false},
		{"banned", &api.Node{Region: "eu", State: api.StateBanned}, false},
		{"other region", &api.Node{Region: "us", State: api.StateWaiting}, false},
	}
	for _, c := range cases {
		if v := view(c.n, "eu", now); v.Offered != c.offered || v.Would == "" {
			t.Errorf("%s: offered %v (%q), want %v", c.name, v.Offered, v.Would, c.offered)
		}
	}
}
