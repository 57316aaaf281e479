// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// Rejection names one node a command did not apply to, and why.
type Rejection struct {
	Identity string `json:"identity"`
	Err      error  `json:"-"`
	Reason   string `json:"reason"`
}

func reject(id string, err error) Rejection {
	return Rejection{Identity: id, Err: err, Reason: err.Error()}
}

// RegisterResult says what a Register did to each node.
type RegisterResult struct {
	Added     int
	Requeued  int
	Unchanged int
	// Held names the nodes this registration held (cluster protocol 8): new ones of a manual
	// region and finished ones seen again under a hold policy. They are in Final too.
	Held     []string
	Rejected []Rejection
	// Final names the nodes the registration left in a final state (provisioned or gone within
	// reprovision_after, deferred, shutdown, abandoned): a later sighting may requeue them. The
	// others wait or are leased, and a sighting changes nothing for them until a result does.
	Final []string
}

// GrantResult holds the granted lease; Lease is nil when no node was eligible.
type GrantResult struct {
	Lease *Lease
	// Replayed is true when the lease id was already granted to the same edge and region, and
	// Lease is that earlier grant (its expiry counted again from this grant's stamp).
	Replayed bool
}

// RenewResult holds the renewed lease.
type RenewResult struct {
	Lease *Lease
}

// ReportResult says which results were applied; Rejected ones are stale or wrong.
type ReportResult struct {
	Accepted int
	// Applied names the accepted nodes in report order.
	Applied  []string
	Rejected []Rejection
	// LeaseDone is true when the report finished the lease's last node and the lease was removed.
	LeaseDone bool
	// Replayed is true when the report's request id was applied before: this is that answer,
	// and nothing changed now.
	Replayed bool
}

// ExpireResult lists the leases that were expired and how many nodes went back to waiting or
// were abandoned.
type ExpireResult struct {
	Expired   []string
	Returned  int
	Abandoned int
}

// ExtendResult counts the leases that were extended.
type ExtendResult struct {
	Extended int
}

// RetryResult lists the nodes a Retry moved back to waiting, as they were before, and those it
// refused.
type RetryResult struct {
	Retried  []RetriedNode
	Rejected []Rejection
}

// RetriedNode is a node as it was when a retry moved (or, planned, would move) it.
type RetriedNode struct {
	Identity  string        `json:"identity"`
	Region    string        `json:"region"`
	From      api.NodeState `json:"from"`
	Attempts  int           `json:"attempts"`
	LastError string        `json:"last_error,omitempty"`
}

// PauseState is the replicated operator pause flag.
type PauseState struct {
	Paused bool      `json:"paused"`
	At     time.Time `json:"at,omitzero"`
	By     string    `json:"by,omitempty"`
	Reason string    `json:"reason,omitempty"`
	// AsOf is the log index the flag holds at: the applied index it was read at, or the pause
	// command's own. Not stored: edges order answers of concurrent calls by it.
	AsOf uint64 `json:"-"`
	// Epoch orders the flag across a recover before AsOf does (api.PauseMark): 1 before any
	// hold, then the last hold's stamp in Unix nanoseconds; 0 below HoldProtocol. Not stored:
	// read from the hold.
	Epoch uint64 `json:"-"`
}
