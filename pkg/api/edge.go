// SPDX-License-Identifier: Apache-2.0

package api

import (
	"encoding/json"
	"slices"
	"time"
)

// Outcome is what an edge reports for one node of a lease.
type Outcome string

// Outcomes an edge may report.
const (
	// OutcomeProvisioned means the node was configured and restarted.
	OutcomeProvisioned Outcome = "provisioned"
	// OutcomeDeferred means the helper deferred the node.
	OutcomeDeferred Outcome = "deferred"
	// OutcomeShutdown means the helper asked for a shutdown and it was sent.
	OutcomeShutdown Outcome = "shutdown"
	// OutcomeFailed means the host flow failed; the node waits again (attempts+1).
	OutcomeFailed Outcome = "failed"
	// OutcomeUpgradeSent means an upgrade was sent; the node waits again until it reappears upgraded.
	OutcomeUpgradeSent Outcome = "upgrade_sent"
	// OutcomeLockHeld means the node answered "Could not obtain provisioning lock": another worker owns it.
	OutcomeLockHeld Outcome = "lock_held"
	// OutcomeReleased means the edge gave the node back without failing it (operator pause, a
	// lease it stopped counting before touching the node, a node waiting too long): it waits
	// again at once and no attempt is counted.
	OutcomeReleased Outcome = "released"
	// OutcomeGone means the node no longer answers in provisioning mode though the ledger offered
	// it: it left it (restarted into a configuration, upgraded, powered off) under an earlier
	// lease whose result never arrived. It is final until discovery sees it in provisioning mode
	// again after lease.reprovision_after, and no attempt is counted.
	OutcomeGone Outcome = "gone"
)

// Outcomes lists every outcome an edge may report.
func Outcomes() []Outcome {
	return []Outcome{OutcomeProvisioned, OutcomeDeferred, OutcomeShutdown, OutcomeFailed, OutcomeUpgradeSent, OutcomeLockHeld, OutcomeReleased, OutcomeGone}
}

// Valid reports whether o is one of the known outcomes.
func (o Outcome) Valid() bool { return slices.Contains(Outcomes(), o) }

// RegisterNode is one discovered node in a RegisterRequest.
type RegisterNode struct {
	Identity string          `json:"identity"`
	Version  string          `json:"version,omitempty"`
	Facts    json.RawMessage `json:"facts,omitempty"`
}

// RegisterRequest records nodes an edge found in provisioning mode in its region; repeating it is harmless.
type RegisterRequest struct {
	Region string         `json:"region"`
	Edge   string         `json:"edge"`
	Nodes  []RegisterNode `json:"nodes"`
}

// RegisterResponse counts what a RegisterRequest changed.
type RegisterResponse struct {
	Added     int `json:"added"`
	Requeued  int `json:"requeued"`
	Unchanged int `json:"unchanged"`
	// Rejected names the nodes refused one by one (an identity the API does not take, a node of
	// another region); the others are recorded.
	Rejected []RejectedResult `json:"rejected,omitempty"`
	// Final names the registered nodes the ledger holds in a final state (provisioned or gone
	// within reprovision_after, deferred, shutdown, abandoned): a later sighting may requeue
	// them. The others wait or are leased and a sighting changes nothing for them until a result
	// does, so an edge may leave them out of its next sweeps' registrations.
	Final []string `json:"final,omitempty"`
	// ListsFinal is true from coordinators that fill Final; without it (an older coordinator)
	// an edge cannot tell which nodes it may leave out.
	ListsFinal bool `json:"lists_final,omitempty"`
}

// AcquireRequest asks for a lease on up to MaxNodes waiting nodes of Region, waiting up to Wait for some.
type AcquireRequest struct {
	Edge     string   `json:"edge"`
	Region   string   `json:"region"`
	MaxNodes int      `json:"max_nodes"`
	Wait     Duration `json:"wait,omitempty"`
	// RequestID makes the acquire idempotent: a retry with the same id gets the lease the first
	// try was granted (its answer may have been lost in a failover) instead of a second one.
	// Client.Acquire sets a random one when empty.
	RequestID string `json:"request_id,omitempty"`
	// Reports are results of leases the edge finished, delivered with the acquire: one round
	// trip and, from cluster protocol 6, one log entry instead of two. Each is the edge's and
	// region's of the acquire and carries its own request id, so it is applied once however often
	// it is sent, with this acquire or alone (ReportRequest). Send them only to a leader whose
	// last answer set CarriesReports: an older one refuses the field. Answered in
	// AcquireResponse.Reports, in the same order.
	Reports []ReportRequest `json:"reports,omitempty"`
}

// AcquireResponse carries the granted lease, or none when nothing was waiting before Wait ran out or the cluster is paused.
type AcquireResponse struct {
	Lease *Lease `json:"lease,omitempty"`
	PauseState
	Leader string `json:"leader,omitempty"`
	// Held is how long the leader held the request before it granted the lease (its monotonic
	// clock): the edge counts the lease from its send + Held, see ValidUntil.
	Held Duration `json:"held,omitempty"`
	// Queue is the region's queue after this answer; nil from a coordinator older than the field.
	Queue *RegionQueue `json:"queue,omitempty"`
	// Reports answers AcquireRequest.Reports, one per report in its order.
	Reports []ReportAnswer `json:"reports,omitempty"`
	// CarriesReports says this coordinator takes AcquireRequest.Reports; false from an older one.
	CarriesReports bool `json:"carries_reports,omitempty"`
}

// ReportAnswer is what became of one report carried by an acquire: the answer a ReportRequest
// would have had, or, in Error, the refusal of the whole report (an unknown lease, a token that
// does not match) as the error body that request would have had.
type ReportAnswer struct {
	RequestID string `json:"request_id"`
	ReportResponse
	Error *ErrorBody `json:"error,omitempty"`
}

// RegionQueue is how many of a region's nodes the ledger holds waiting and leased, from its
// per-region state counts; a pointer in answers, so an edge tells "none sent" from zeros.
type RegionQueue struct {
	// Waiting counts nodes waiting for a lease, those inside a backoff or lock window included.
	Waiting int `json:"waiting"`
	// Leased counts nodes under a lease of any edge of the region.
	Leased int `json:"leased"`
}

// ValidUntil is when an edge that sent the acquire at sent must stop acting on the lease: sent +
// Held + TTL - margin. Take sent from time.Now() before the request left, so it carries the
// monotonic reading; the zero time when no lease was granted.
func (r AcquireResponse) ValidUntil(sent time.Time, margin time.Duration) time.Time {
	if r.Lease == nil {
		return time.Time{}
	}
	return sent.Add(r.Held.Std() + r.Lease.TTL.Std() - margin)
}

// RenewRequest extends a lease the edge still holds; ID and Token must both match.
type RenewRequest struct {
	LeaseID string `json:"lease_id"`
	Token   uint64 `json:"token"`
	Edge    string `json:"edge"`
	Region  string `json:"region"`
}

// RenewResponse carries the lease with its new expiry and the TTL the edge must count.
type RenewResponse struct {
	Lease Lease `json:"lease"`
	PauseState
}

// ValidUntil is when an edge that sent the renewal at sent must stop acting on the lease: sent +
// Lease.TTL - margin (take sent from time.Now() before the request left).
func (r RenewResponse) ValidUntil(sent time.Time, margin time.Duration) time.Time {
	return sent.Add(r.Lease.TTL.Std() - margin)
}

// NodeResult is the outcome of one node of a lease.
type NodeResult struct {
	Identity string  `json:"identity"`
	Outcome  Outcome `json:"outcome"`
	Error    string  `json:"error,omitempty"`
	Version  string  `json:"version,omitempty"`
}

// ReportRequest delivers results for nodes of a lease; it is applied only under the node's current lease id and token.
type ReportRequest struct {
	LeaseID string       `json:"lease_id"`
	Token   uint64       `json:"token"`
	Edge    string       `json:"edge"`
	Region  string       `json:"region"`
	Results []NodeResult `json:"results"`
	// RequestID makes the report idempotent: a retry with the same id (its first answer lost, or
	// forwarded again across a leadership change) gets the first try's outcomes and changes
	// nothing. Client.Report sets a random one when empty.
	RequestID string `json:"request_id,omitempty"`
}

// RejectedResult names a result the ledger refused and why.
type RejectedResult struct {
	Identity string `json:"identity"`
	Reason   string `json:"reason"`
}

// ReportResponse lists which results were applied and which were refused as stale.
type ReportResponse struct {
	Applied  []string         `json:"applied"`
	Rejected []RejectedResult `json:"rejected,omitempty"`
}

// HeartbeatRequest tells the coordinator an edge is alive and which leases it believes it holds.
type HeartbeatRequest struct {
	Edge   string   `json:"edge"`
	Region string   `json:"region"`
	Leases []string `json:"leases,omitempty"`
}

// HeartbeatResponse tells an edge whether the operator paused provisioning and who leads.
type HeartbeatResponse struct {
	PauseState
	Leader string    `json:"leader,omitempty"`
	Time   time.Time `json:"time"`
	// Queue is the edge's region's queue; nil from a coordinator older than the field.
	Queue *RegionQueue `json:"queue,omitempty"`
}
