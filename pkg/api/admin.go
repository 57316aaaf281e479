// SPDX-License-Identifier: Apache-2.0

package api

import "time"

// Member is one coordinator of the Raft configuration.
type Member struct {
	ID          string `json:"id"`
	RaftAddress string `json:"raft_address"`
	APIAddress  string `json:"api_address,omitempty"` // base URL, e.g. https://10.0.0.1:8443
	Voter       bool   `json:"voter"`
	Leader      bool   `json:"leader"`
	// RoundTrip is the round trip to this member as the answering member measures it (the least
	// of its last probes); absent for itself and before the first probe.
	RoundTrip Duration `json:"round_trip,omitempty"`
	// Reachable is whether the answering member reaches this one now (its last probe of the
	// member's API answered, recently); LastContact is how long ago it last heard from it (an
	// answered probe, or Raft for its leader), absent for itself and when it never has. Both are
	// absent from builds before they were reported.
	Reachable   *bool     `json:"reachable,omitempty"`
	LastContact *Duration `json:"last_contact,omitempty"`
}

// StatusResponse is one member's view of the cluster and of the ledger it has applied.
type StatusResponse struct {
	ID           string                       `json:"id"`
	State        string                       `json:"state"`
	Members      []Member                     `json:"members"`
	Leader       string                       `json:"leader,omitempty"`
	LeaderID     string                       `json:"leader_id,omitempty"`
	Term         uint64                       `json:"term"`
	AppliedIndex uint64                       `json:"applied_index"`
	CommitIndex  uint64                       `json:"commit_index"`
	Paused       bool                         `json:"paused"`
	PauseReason  string                       `json:"pause_reason,omitempty"`
	LeasesActive int                          `json:"leases_active"`
	Regions      map[string]map[NodeState]int `json:"regions"`
	// Protocol is the newest cluster protocol this member applies (absent from builds before
	// protocols: 1), and ClusterProtocol the one its ledger runs: the lowest of every member's.
	Protocol        int `json:"protocol,omitempty"`
	ClusterProtocol int `json:"cluster_protocol,omitempty"`
	// Warnings name what this member's configuration allows but exposes, or ignores.
	Warnings []string `json:"warnings,omitempty"`
	// GrantsHeld is set while no new lease is granted: after a recover, until every lease the
	// lost members may have granted has ended and go-choria's lock window has passed.
	GrantsHeld *GrantHold `json:"grants_held,omitempty"`
	// Quorum is whether the cluster can commit as this member sees it: it leads, or it follows a
	// leader it hears from. NoQuorum says why not. Absent from builds before they were reported.
	Quorum   *bool  `json:"quorum,omitempty"`
	NoQuorum string `json:"no_quorum,omitempty"`
	// RaftAddress is this member's own Raft address (others dial it), also before any
	// configuration holds it; ClusterID the cluster its data directory belongs to, empty while
	// it names none; LastIndex the last entry of its Raft log, 0 while it has no Raft state. A
	// member started with bootstrap_expect reads the three from every join target.
	RaftAddress string `json:"raft_address,omitempty"`
	ClusterID   string `json:"cluster_id,omitempty"`
	LastIndex   uint64 `json:"last_index,omitempty"`
	// Ledger is the member's ledger fingerprint, only when asked for (?fingerprint=true): it
	// reads the whole ledger.
	Ledger *Fingerprint `json:"ledger,omitempty"`
	// Caller is the admin this answer was given to, as the member authenticated it: what the
	// status page and the CLI may offer it (absent from builds before named admins).
	Caller *Caller `json:"caller,omitempty"`
}

// Fingerprint is a digest of a member's whole ledger at the index it has applied: members that
// applied the same log agree, so two that answer the same index and different digests diverged.
type Fingerprint struct {
	AppliedIndex uint64 `json:"applied_index"`
	Digest       string `json:"digest"`
}

// GrantHold is a hold on new leases after a recover: no node is offered before Until (ledger
// time, the leader's clock, which lags wall clocks by any whole-cluster outage).
type GrantHold struct {
	Until  time.Time `json:"until"`
	Reason string    `json:"reason"`
	// Remaining is how long the hold still lasts on the leader's clock; zero from another member.
	Remaining Duration `json:"remaining,omitempty"`
}

// NodeFilter selects nodes for the admin listing; empty fields match everything.
type NodeFilter struct {
	Region string    `json:"region,omitempty"`
	State  NodeState `json:"state,omitempty"`
	After  string    `json:"after,omitempty"`
	Limit  int       `json:"limit,omitempty"`
}

// NodesResponse is one page of nodes in identity order; Next is the After of the following page.
type NodesResponse struct {
	Nodes []Node `json:"nodes"`
	Next  string `json:"next,omitempty"`
	// Stale is set when a member answered from its own copy of the ledger, without the leader.
	Stale *Staleness `json:"stale,omitempty"`
}

// Staleness says how far a read served from one member's own copy of the ledger may lag the
// leader's: an operator cut off from the quorum is answered with it rather than refused.
type Staleness struct {
	// Member is the member that answered.
	Member string `json:"member"`
	// Reason is why it answered itself: the caller asked (stale=true), or no leader was reachable.
	Reason string `json:"reason"`
	// KnownLeader is whether the member knew of a leader when it answered.
	KnownLeader bool `json:"known_leader"`
	// LastContact is how long ago the member last heard from a leader (as Consul's
	// X-Consul-LastContact); negative when it never has since it started.
	LastContact Duration `json:"last_contact"`
	// AppliedIndex is the Raft index of the last entry the member's copy holds.
	AppliedIndex uint64 `json:"applied_index"`
}

// PauseRequest stops every edge from starting work until Resume; Reason is shown in status.
type PauseRequest struct {
	Reason string `json:"reason,omitempty"`
}

// PauseResponse reports the replicated pause flag after the change.
type PauseResponse struct {
	Paused bool   `json:"paused"`
	Reason string `json:"reason,omitempty"`
}

// JoinRequest adds a member to the Raft configuration.
type JoinRequest struct {
	ID          string `json:"id"`
	RaftAddress string `json:"raft_address"`
	APIAddress  string `json:"api_address"`
	NonVoter    bool   `json:"non_voter,omitempty"`
	// Protocol is the newest cluster protocol the joining member applies, sent by the member
	// itself; 0 when the caller does not know (an operator's join, a build before protocols).
	Protocol int `json:"protocol,omitempty"`
	// Learner is sent by a member that has no vote yet (it started without Raft state): the
	// leader replaces any entry it had with a non-voter and promotes it once it has caught up.
	// The member asks again until the answer says it is a voter.
	Learner bool `json:"learner,omitempty"`
	// LearnerSince is the configuration index of the last answer that named the member a
	// non-voter (JoinResponse.ConfigIndex), 0 before one: a voter entry made after it is the
	// member's promotion, one before it is the entry of the member that lost its state.
	LearnerSince uint64 `json:"learner_since,omitempty"`
	// AppliedIndex is the last log index the member has applied; a learner is promoted once it
	// has applied the entry that made it one.
	AppliedIndex uint64 `json:"applied_index,omitempty"`
	// ClusterID is the cluster the member's data directory belongs to, empty when it records
	// none (no state yet, or a ledger from before cluster ids); the leader refuses another one.
	ClusterID string `json:"cluster_id,omitempty"`
}

// JoinResponse is the leader's answer to a join.
type JoinResponse struct {
	// Voter says the member votes in the leader's configuration (a learner may open its vote).
	Voter bool `json:"voter"`
	// ConfigIndex is the index of the committed configuration the answer describes; 0 when the
	// configuration changed and is not committed yet (ask again).
	ConfigIndex uint64 `json:"config_index,omitempty"`
	// ClusterID is the leader's cluster, empty while its cluster has none yet.
	ClusterID string `json:"cluster_id,omitempty"`
}

// RemoveRequest removes a member from the Raft configuration.
type RemoveRequest struct {
	ID string `json:"id"`
}

// SnapshotResponse describes the Raft snapshot the leader just took.
type SnapshotResponse struct {
	ID    string    `json:"id"`
	Index uint64    `json:"index"`
	Term  uint64    `json:"term"`
	Size  int64     `json:"size"`
	At    time.Time `json:"at"`
}
