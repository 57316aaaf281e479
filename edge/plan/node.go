// SPDX-License-Identifier: Apache-2.0

package plan

import (
	"maps"
	"slices"
	"time"

	"github.com/seed96588659/muster/edge/helper"
	"github.com/seed96588659/muster/pkg/api"
)

// Action is what a run would do with a node.
type Action string

// The actions, in the order a summary lists them.
const (
	// Provision: configure the node with the helper's answer and restart it.
	Provision Action = "provision"
	// Upgrade: send release_update, and provision the node once it returns on the target.
	Upgrade Action = "upgrade"
	// Defer: the helper defers the node to a later sweep.
	Defer Action = "defer"
	// Shutdown: the helper has the node shut down.
	Shutdown Action = "shutdown"
	// Skip: the run would not act on the node now (the reason says why).
	Skip Action = "skip"
	// Fail: the run would try and fail (the reason says at which step).
	Fail Action = "fail"
)

// Actions lists every action in summary order.
func Actions() []Action { return []Action{Provision, Upgrade, Defer, Shutdown, Skip, Fail} }

// Node is the plan for one discovered node.
type Node struct {
	Identity string `json:"identity"`
	// Version and Upgradable are what its inventory said; empty when it gave none.
	Version    string `json:"version,omitempty"`
	Upgradable bool   `json:"upgradable"`
	Action     Action `json:"action"`
	// From and To are the versions of an upgrade.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Reason says why, in a sentence.
	Reason string `json:"reason"`
	// Helper is the helper's answer, nil when it was not asked.
	Helper *Answer `json:"helper,omitempty"`
	// Cluster is the ledger's view, nil standalone.
	Cluster *ClusterView `json:"cluster,omitempty"`
}

// Answer is what the helper answered, without a value that may be secret: the names of the
// configuration keys and policies, whether a key, certificate, CA or server claims came, never
// their contents.
type Answer struct {
	Defer    bool   `json:"defer"`
	Shutdown bool   `json:"shutdown"`
	Msg      string `json:"msg,omitempty"`
	Upgrade  string `json:"upgrade,omitempty"`
	// ConfigurationKeys are the names of the configuration's keys, sorted.
	ConfigurationKeys []string `json:"configuration_keys"`
	Key               bool     `json:"key"`
	Certificate       bool     `json:"certificate"`
	CA                bool     `json:"ca"`
	ServerClaims      bool     `json:"server_claims"`
	// ActionPolicies and OPAPolicies are the policy files' names, sorted.
	ActionPolicies []string `json:"action_policies,omitempty"`
	OPAPolicies    []string `json:"opa_policies,omitempty"`
	// Error is why the helper gave no answer.
	Error string `json:"error,omitempty"`
}

// answerOf keeps of r what a plan may show; text the helper chose is escaped.
func answerOf(r *helper.Response) *Answer {
	return &Answer{
		Defer: r.Defer, Shutdown: r.Shutdown, Msg: api.Printable(r.Msg), Upgrade: api.Printable(r.Upgrade),
		ConfigurationKeys: names(r.Configuration),
		Key:               r.Key != "", Certificate: r.Certificate != "", CA: r.CA != "", ServerClaims: r.ServerClaims != nil,
		ActionPolicies: names(r.ActionPolicies), OPAPolicies: names(r.OPAPolicies),
	}
}

// names are m's keys, sorted and escaped; never nil, so JSON shows an empty list.
func names(m map[string]string) []string {
	out := []string{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, api.Printable(k))
	}
	return out
}

// ClusterView is what the coordinators' ledger says of a node, and what the cluster would do.
type ClusterView struct {
	// State is the ledger's state, "" for a node the ledger does not hold.
	State      api.NodeState `json:"state,omitempty"`
	Region     string        `json:"region,omitempty"`
	Edge       string        `json:"edge,omitempty"`
	LeaseToken uint64        `json:"lease_token,omitempty"`
	Attempts   int           `json:"attempts,omitempty"`
	NotBefore  time.Time     `json:"not_before,omitzero"`
	FinishedAt time.Time     `json:"finished_at,omitzero"`
	// Offered is true when the cluster would offer the node to an edge of this region.
	Offered bool `json:"offered"`
	// Would says what the cluster would do, in a sentence.
	Would string `json:"would"`
}
