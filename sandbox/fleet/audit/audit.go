// SPDX-License-Identifier: Apache-2.0

// Package audit summarises DIR/actions.jsonl: totals, per-node action counts and callers,
// which nodes ended provisioned, and which were provisioned twice.
//
// Provisioning episodes. A node's choria_provision actions, in time order, are cut into
// episodes, one per life of the node in provisioning mode. When the node records its
// incarnation with every action (emulated nodes do), an episode is one incarnation: the node
// itself says when it came back in provisioning mode (a restart into provisioning, a
// reprovision, a rebuild, a flap). Otherwise an episode ends with (and includes) a successful
// restart, release_update, shutdown or reprovision: each of these makes the node restart or go
// away, so whatever comes next is taken for a new boot. A node is double provisioned when,
// within one episode, it accepted (OK) configure, restart or release_update from two or more
// different callers: two provisioners acting on one life of the node, where a node that came
// back as a new incarnation (rebuilt, flapping) may be provisioned again by anyone. Rejected
// actions do not count: a configure refused with "Could not obtain provisioning lock" is the
// node protecting itself, not a second provisioner acting on it.
package audit

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/seed96588659/muster/sandbox/fleet/recorder"
)

// Action names the report reasons about.
const (
	Configure     = "choria_provision#configure"
	Restart       = "choria_provision#restart"
	ReleaseUpdate = "choria_provision#release_update"
	Shutdown      = "choria_provision#shutdown"
	Reprovision   = "choria_provision#reprovision"
)

// Report is what `muster-sandbox report` prints.
type Report struct {
	Totals Totals `json:"totals"`
	// Nodes maps each node identity to what it received.
	Nodes map[string]*Node `json:"nodes"`
	// Provisioned lists nodes whose last episode with an accepted configure ended with a
	// successful restart (refused configures, e.g. by the lock, changed nothing and do not count).
	Provisioned []string `json:"provisioned"`
	// DoubleProvisioned lists every episode in which a node accepted changes from two callers.
	DoubleProvisioned []Double `json:"double_provisioned"`
}

// Totals count over the whole log.
type Totals struct {
	Actions           int            `json:"actions"`
	OK                int            `json:"ok"`
	Failed            int            `json:"failed"`
	Nodes             int            `json:"nodes"`
	Callers           int            `json:"callers"`
	ByAction          map[string]int `json:"by_action"`
	Provisioned       int            `json:"provisioned"`
	DoubleProvisioned int            `json:"double_provisioned"`
}

// Node is one node's part of the log.
type Node struct {
	Regions []string `json:"regions"`
	// Actions maps agent#action to its counts.
	Actions map[string]*Count `json:"actions"`
	// Episodes is how many provisioning episodes the node had (an unfinished one counts).
	Episodes    int  `json:"episodes"`
	Provisioned bool `json:"provisioned"`
	// ProvisionedAt is when the node accepted the restart that ended it provisioned; zero when
	// Provisioned is false.
	ProvisionedAt time.Time `json:"provisioned_at,omitzero"`
}

// Count is how often one action arrived, how it ended, and from whom.
type Count struct {
	Count   int            `json:"count"`
	OK      int            `json:"ok"`
	Failed  int            `json:"failed"`
	Callers map[string]int `json:"callers"`
}

// Double is one episode of one node with changes accepted from several callers.
type Double struct {
	Node    string   `json:"node"`
	Region  string   `json:"region"`
	Episode int      `json:"episode"`
	Callers []string `json:"callers"`
	// Evidence are the accepted configure, restart and release_update actions of the episode.
	Evidence []recorder.Action `json:"evidence"`
}

// FromFile reads an action log and builds its report.
func FromFile(path string) (Report, error) {
	actions, err := recorder.ReadFile(path)
	if err != nil {
		return Report{}, err
	}
	return Build(actions), nil
}

// Build computes the report; actions may come in any order and are considered by time.
func Build(actions []recorder.Action) Report {
	sorted := append([]recorder.Action(nil), actions...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Time.Before(sorted[j].Time) })

	r := Report{
		Totals:            Totals{ByAction: map[string]int{}},
		Nodes:             map[string]*Node{},
		Provisioned:       []string{},
		DoubleProvisioned: []Double{},
	}
	callers := map[string]bool{}
	byNode := map[string][]recorder.Action{}
	for _, a := range sorted {
		r.Totals.Actions++
		if a.OK {
			r.Totals.OK++
		} else {
			r.Totals.Failed++
		}
		r.Totals.ByAction[a.Action]++
		callers[a.Caller] = true

		n := r.Nodes[a.Node]
		if n == nil {
			n = &Node{Regions: []string{}, Actions: map[string]*Count{}}
			r.Nodes[a.Node] = n
		}
		if !slices.Contains(n.Regions, a.Region) {
			n.Regions = append(n.Regions, a.Region)
			sort.Strings(n.Regions)
		}
		c := n.Actions[a.Action]
		if c == nil {
			c = &Count{Callers: map[string]int{}}
			n.Actions[a.Action] = c
		}
		c.Count++
		if a.OK {
			c.OK++
		} else {
			c.Failed++
		}
		c.Callers[a.Caller]++
		if strings.HasPrefix(a.Action, "choria_provision#") {
			byNode[a.Node] = append(byNode[a.Node], a)
		}
	}
	r.Totals.Nodes = len(r.Nodes)
	r.Totals.Callers = len(callers)

	ids := make([]string, 0, len(byNode))
	for id := range byNode {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		n := r.Nodes[id]
		e := episodesOf(id, byNode[id])
		n.Episodes = e.count
		r.DoubleProvisioned = append(r.DoubleProvisioned, e.doubles...)
		if !e.provisionedAt.IsZero() {
			n.Provisioned, n.ProvisionedAt = true, e.provisionedAt
			r.Provisioned = append(r.Provisioned, id)
		}
	}
	r.Totals.Provisioned = len(r.Provisioned)
	r.Totals.DoubleProvisioned = len(r.DoubleProvisioned)
	return r
}

// episodes is what episodesOf found in one node's provisioning actions.
type episodes struct {
	// count is how many episodes there were, an unfinished one included.
	count int
	// doubles are the episodes with accepted changes from more than one caller.
	doubles []Double
	// provisionedAt is the time of the successful restart that ended the last episode with an
	// accepted configure; zero when the node did not end provisioned.
	provisionedAt time.Time
}

// episodesOf cuts one node's provisioning actions into episodes.
func episodesOf(node string, actions []recorder.Action) episodes {
	var (
		doubles       []Double
		episode       = 1
		evidence      []recorder.Action
		started       bool
		configured    bool
		provisionedAt time.Time
	)
	closeEpisode := func() {
		if c := distinctCallers(evidence); len(c) > 1 {
			doubles = append(doubles, Double{Node: node, Region: evidence[0].Region, Episode: episode, Callers: c, Evidence: evidence})
		}
		evidence = nil
	}
	byIncarnation := len(actions) > 0 && !slices.ContainsFunc(actions, func(a recorder.Action) bool { return a.Incarnation == 0 })
	for i, a := range actions {
		if byIncarnation && i > 0 && a.Incarnation != actions[i-1].Incarnation {
			configured = false
			closeEpisode()
			episode++
		}
		started = true
		if a.OK && (a.Action == Configure || a.Action == Restart || a.Action == ReleaseUpdate) {
			evidence = append(evidence, a)
		}
		if a.OK && a.Action == Configure {
			configured = true
			provisionedAt = time.Time{}
		}
		if a.OK && endsEpisode(a.Action) {
			if configured && a.Action == Restart {
				provisionedAt = a.Time
			}
			configured = false
			if !byIncarnation {
				closeEpisode()
				episode++
				started = false
			}
		}
	}
	closeEpisode()
	if !started {
		episode--
	}
	return episodes{count: episode, doubles: doubles, provisionedAt: provisionedAt}
}

func endsEpisode(action string) bool {
	switch action {
	case Restart, ReleaseUpdate, Shutdown, Reprovision:
		return true
	}
	return false
}

func distinctCallers(actions []recorder.Action) []string {
	var out []string
	for _, a := range actions {
		if !slices.Contains(out, a.Caller) {
			out = append(out, a.Caller)
		}
	}
	sort.Strings(out)
	return out
}
