// SPDX-License-Identifier: Apache-2.0

package audit

import (
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/seed96588659/muster/sandbox/fleet/recorder"
)

const (
	e1 = "choria=edge-eu-1.mcollective"
	e2 = "choria=edge-eu-2.mcollective"
)

// script is a scripted lab run; step i happens at t0 + i seconds.
func script(t0 time.Time) []recorder.Action {
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) }
	ok := func(i int, node, action, caller string) recorder.Action {
		return recorder.Action{Time: at(i), Region: "eu", Node: node, Action: action, Caller: caller, OK: true}
	}
	bad := func(i int, node, action, caller, msg string) recorder.Action {
		a := ok(i, node, action, caller)
		a.OK, a.Error = false, msg
		return a
	}
	return []recorder.Action{
		ok(1, "a", "discovery#ping", e1),
		ok(2, "a", "rpcutil#inventory", e1),
		ok(3, "a", Configure, e1),
		ok(4, "a", Restart, e1),

		ok(5, "b", Configure, e1),
		bad(6, "b", Configure, e2, "Could not obtain provisioning lock"),
		ok(7, "b", Restart, e1),

		// constructed double provisioning: e2 configures and restarts c after e1 configured it
		ok(8, "c", Configure, e1),
		ok(9, "c", Configure, e2),
		ok(10, "c", Restart, e2),

		// an upgrade ends an episode, so e2 provisioning d afterwards is not double
		ok(11, "d", ReleaseUpdate, e1),
		ok(12, "d", Configure, e2),
		ok(13, "d", Restart, e2),

		ok(14, "e", Configure, e1),
		bad(15, "e", Restart, e1, "Configuration /x/server.conf enables provisioning, restart cannot continue"),
	}
}

func count(n, ok int, callers map[string]int) *Count {
	return &Count{Count: n, OK: ok, Failed: n - ok, Callers: callers}
}

func TestReport_ScriptedRunIsExact(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 15, 0, 0, 123456789, time.UTC)
	actions := script(t0)

	// through the real recorder and file, in shuffled order: the report orders by time
	path := filepath.Join(t.TempDir(), "actions.jsonl")
	rec, err := recorder.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	shuffled := append([]recorder.Action(nil), actions...)
	rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for _, a := range shuffled {
		if err := rec.Write(a); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := FromFile(path)
	if err != nil {
		t.Fatal(err)
	}

	eu := []string{"eu"}
	want := Report{
		Totals: Totals{
			Actions: 15, OK: 13, Failed: 2, Nodes: 5, Callers: 2,
			ByAction:    map[string]int{"discovery#ping": 1, "rpcutil#inventory": 1, Configure: 7, Restart: 5, ReleaseUpdate: 1},
			Provisioned: 4, DoubleProvisioned: 1,
		},
		Nodes: map[string]*Node{
			"a": {Regions: eu, Episodes: 1, Provisioned: true, ProvisionedAt: t0.Add(4 * time.Second), Actions: map[string]*Count{
				"discovery#ping":    count(1, 1, map[string]int{e1: 1}),
				"rpcutil#inventory": count(1, 1, map[string]int{e1: 1}),
				Configure:           count(1, 1, map[string]int{e1: 1}),
				Restart:             count(1, 1, map[string]int{e1: 1}),
			}},
			"b": {Regions: eu, Episodes: 1, Provisioned: true, ProvisionedAt: t0.Add(7 * time.Second), Actions: map[string]*Count{
				Configure: count(2, 1, map[string]int{e1: 1, e2: 1}),
				Restart:   count(1, 1, map[string]int{e1: 1}),
			}},
			"c": {Regions: eu, Episodes: 1, Provisioned: true, ProvisionedAt: t0.Add(10 * time.Second), Actions: map[string]*Count{
				Configure: count(2, 2, map[string]int{e1: 1, e2: 1}),
				Restart:   count(1, 1, map[string]int{e2: 1}),
			}},
			"d": {Regions: eu, Episodes: 2, Provisioned: true, ProvisionedAt: t0.Add(13 * time.Second), Actions: map[string]*Count{
				ReleaseUpdate: count(1, 1, map[string]int{e1: 1}),
				Configure:     count(1, 1, map[string]int{e2: 1}),
				Restart:       count(1, 1, map[string]int{e2: 1}),
			}},
			"e": {Regions: eu, Episodes: 1, Provisioned: false, Actions: map[string]*Count{
				Configure: count(1, 1, map[string]int{e1: 1}),
				Restart:   count(1, 0, map[string]int{e1: 1}),
			}},
		},
		Provisioned: []string{"a", "b", "c", "d"},
		DoubleProvisioned: []Double{{
			Node: "c", Region: "eu", Episode: 1, Callers: []string{e1, e2},
			Evidence: []recorder.Action{actions[7], actions[8], actions[9]},
		}},
	}

	// compare as JSON: what the command prints is what matters, and times round-trip exactly
	gj, _ := json.MarshalIndent(got, "", " ")
	wj, _ := json.MarshalIndent(want, "", " ")
	if string(gj) != string(wj) {
		t.Fatalf("report differs\n got: %s\nwant: %s", gj, wj)
	}
	if !got.DoubleProvisioned[0].Evidence[0].Time.Equal(t0.Add(8 * time.Second)) {
		t.Fatalf("evidence time lost precision: %v", got.DoubleProvisioned[0].Evidence[0].Time)
	}
}

func TestReport_LockRefusalIsNotDoubleProvisioning(t *testing.T) {
	t0 := time.Now()
	r := Build([]recorder.Action{
		{Time: t0, Node: "n", Action: Configure, Caller: e1, OK: true},
		{Time: t0.Add(time.Millisecond), Node: "n", Action: Configure, Caller: e2, Error: "Could not obtain provisioning lock"},
		{Time: t0.Add(2 * time.Millisecond), Node: "n", Action: Restart, Caller: e2, Error: "Could not obtain provisioning lock"},
	})
	if len(r.DoubleProvisioned) != 0 {
		t.Fatalf("refused actions counted as double provisioning: %+v", r.DoubleProvisioned)
	}
	if r.Nodes["n"].Provisioned {
		t.Fatal("node without a successful restart reported provisioned")
	}
}

func TestReport_SecondEpisodeDoubleIsNumbered(t *testing.T) {
	t0 := time.Now()
	r := Build([]recorder.Action{
		{Time: t0, Node: "n", Action: Configure, Caller: e1, OK: true},
		{Time: t0.Add(1), Node: "n", Action: Restart, Caller: e1, OK: true},
		{Time: t0.Add(2), Node: "n", Action: Configure, Caller: e1, OK: true},
		{Time: t0.Add(3), Node: "n", Action: ReleaseUpdate, Caller: e2, OK: true},
	})
	if len(r.DoubleProvisioned) != 1 || r.DoubleProvisioned[0].Episode != 2 || r.Nodes["n"].Episodes != 2 {
		t.Fatalf("want one double in episode 2 of 2, got %+v episodes=%d", r.DoubleProvisioned, r.Nodes["n"].Episodes)
	}
}

func TestReport_EmptyLog(t *testing.T) {
	r := Build(nil)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"totals":{"actions":0,"ok":0,"failed":0,"nodes":0,"callers":0,"by_action":{},"provisioned":0,"double_provisioned":0},"nodes":{},"provisioned":[],"double_provisioned":[]}`
	if string(b) != want {
		t.Fatalf("empty report %s", b)
	}
	if !reflect.DeepEqual(r.Provisioned, []string{}) {
		t.Fatal("provisioned should be an empty list")
	}
}

// life is an action a node recorded in its incarnation inc.
func life(i, inc int, node, action, caller string) recorder.Action {
	t0 := time.Date(2026, 12, 8, 1, 0, 0, 0, time.UTC)
	return recorder.Action{Time: t0.Add(time.Duration(i) * time.Second), Region: "eu", Node: node, Action: action, Caller: caller, OK: true, Incarnation: inc}
}

// A node that came back in provisioning mode (rebuilt, flapping) is a new life: another edge
// provisioning it is not a double provisioning. Two edges acting on one life are, even when
// an accepted restart lies between them: the node says it never left that life.
func TestReport_IncarnationsTellANewLifeFromTwoEdgesOnOne(t *testing.T) {
	rep := Build([]recorder.Action{
		// rebuilt: e1 provisions life 1, e2 the rebuilt node's life 2
		life(1, 1, "rebuilt", Configure, e1),
		life(2, 1, "rebuilt", Restart, e1),
		life(3, 2, "rebuilt", Configure, e2),
		life(4, 2, "rebuilt", Restart, e2),
		// flapping: three lives, alternating edges
		life(5, 1, "flapping", Configure, e1),
		life(6, 1, "flapping", Restart, e1),
		life(7, 2, "flapping", Configure, e2),
		life(8, 2, "flapping", Restart, e2),
		life(9, 3, "flapping", Configure, e1),
		life(10, 3, "flapping", Restart, e1),
		// one life, two edges: e2 acts after e1's accepted restart, on the same incarnation
		life(11, 1, "twice", Configure, e1),
		life(12, 1, "twice", Restart, e1),
		life(13, 1, "twice", Configure, e2),
		life(14, 1, "twice", Restart, e2),
	})
	if len(rep.DoubleProvisioned) != 1 {
		t.Fatalf("doubles = %+v, want only the node acted on twice in one life", rep.DoubleProvisioned)
	}
	if d := rep.DoubleProvisioned[0]; d.Node != "twice" || d.Episode != 1 || !reflect.DeepEqual(d.Callers, []string{e1, e2}) || len(d.Evidence) != 4 {
		t.Fatalf("double = %+v", d)
	}
	for node, episodes := range map[string]int{"rebuilt": 2, "flapping": 3, "twice": 1} {
		if n := rep.Nodes[node]; n.Episodes != episodes || !n.Provisioned {
			t.Errorf("%s: %d episodes, provisioned %v; want %d, true", node, n.Episodes, n.Provisioned, episodes)
		}
	}
	// Without incarnations the same log of "twice" reads as two boots, as before.
	old := []recorder.Action{life(11, 0, "twice", Configure, e1), life(12, 0, "twice", Restart, e1), life(13, 0, "twice", Configure, e2), life(14, 0, "twice", Restart, e2)}
	if rep := Build(old); len(rep.DoubleProvisioned) != 0 || rep.Nodes["twice"].Episodes != 2 {
		t.Fatalf("without incarnations: doubles %+v, episodes %d", rep.DoubleProvisioned, rep.Nodes["twice"].Episodes)
	}
}
