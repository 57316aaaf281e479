// SPDX-License-Identifier: Apache-2.0

package hostflow

import (
	"fmt"
	"strings"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// Outcome is how one run of the host flow ended for its node.
type Outcome int

const (
	// Provisioned: configured and restarted (the restart was acknowledged).
	Provisioned Outcome = iota + 1
	// Deferred: the helper deferred the node; it is retried on a later cycle.
	Deferred
	// Shutdown: the helper rejected the node and the shutdown was acknowledged; the node is done.
	Shutdown
	// UpgradeSent: release_update was accepted; the node comes back on the target version and
	// is provisioned then.
	UpgradeSent
	// LockHeld: the node answered that another caller holds its provisioning lock.
	LockHeld
	// Failed: a step failed; the node may be tried again.
	Failed
	// Skipped: the node waited longer than twice the discovery interval and was not touched.
	Skipped
	// Paused: the operator paused, the lease ran out before the flow finished, or the call that
	// would take the node out of provisioning mode could not be recorded first; the node was
	// left at an attempt boundary.
	Paused
	// Unknown: restart, release_update or shutdown got no reply. The node may have accepted and
	// be restarting (its agent then answers nothing more), so the edge confirms by rediscovery
	// instead of retrying into the agent's held mutex. Step says which of the three it was, or
	// names the flow's first call when that one got no reply: the node may have left
	// provisioning mode since it was discovered.
	Unknown
	// Gone: the flow's first call got no reply and rediscovery no longer finds the node in
	// provisioning mode; an earlier lease took it out and its result never arrived.
	Gone
	// DuplicateResponder: a second responder answered a credential-making action (Step names
	// it: jwt, gen25519 or gencsr) before configure was sent, so the key received may be a
	// rogue's; nothing was signed for it or sent to it, and the node may be tried again.
	DuplicateResponder
)

// String names the outcome for logs and metric labels.
func (o Outcome) String() string {
	switch o {
	case Provisioned:
		return "provisioned"
	case Deferred:
		return "deferred"
	case Shutdown:
		return "shutdown"
	case UpgradeSent:
		return "upgrade_sent"
	case LockHeld:
		return "lock_held"
	case Failed:
		return "failed"
	case Skipped:
		return "skipped"
	case Paused:
		return "paused"
	case Unknown:
		return "unknown"
	case Gone:
		return "gone"
	case DuplicateResponder:
		return "duplicate_responder"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Outcomes lists every outcome, for metrics that should show zeros.
func Outcomes() []Outcome {
	return []Outcome{Provisioned, Deferred, Shutdown, UpgradeSent, LockHeld, Failed, Skipped, Paused, Unknown, Gone, DuplicateResponder}
}

// Settled is what an unanswered step did once the node is known to have left provisioning
// mode: the restart, upgrade or shutdown was acted on, or, when the flow's first call went
// unanswered, the node had already left (Gone).
func Settled(step string) Outcome {
	switch step {
	case "restart":
		return Provisioned
	case "release_update":
		return UpgradeSent
	case "shutdown":
		return Shutdown
	}
	return Gone
}

// Result is what one run of the flow did to one node.
type Result struct {
	Identity string
	Outcome  Outcome
	// Err explains every outcome but Provisioned and UpgradeSent.
	Err error
	// Step names the action an Unknown outcome awaits confirmation of (restart,
	// release_update or shutdown), or the step that failed.
	Step string
	// Version is the node's version from its inventory, when it was read.
	Version string
	// Target is the helper's upgrade version, when it named one.
	Target string
	// Took is how long the flow ran.
	Took time.Duration
}

// API is the result as an edge reports it to its lease source. Unknown, Skipped, Paused and
// DuplicateResponder have no outcome of their own on the wire: the edge resolves Unknown by
// rediscovery first, and the others leave the node to be tried again, which the coordinator
// calls failed (a duplicate responder's error starts with api.DuplicateResponderPrefix, which a
// coordinator of cluster protocol 8 holds the node for).
func (r Result) API() api.NodeResult {
	n := api.NodeResult{Identity: r.Identity, Version: r.Version}
	if r.Err != nil {
		n.Error = r.Err.Error()
	}
	switch r.Outcome {
	case Provisioned:
		n.Outcome = api.OutcomeProvisioned
	case Deferred:
		n.Outcome = api.OutcomeDeferred
	case Shutdown:
		n.Outcome = api.OutcomeShutdown
	case UpgradeSent:
		n.Outcome = api.OutcomeUpgradeSent
	case LockHeld:
		n.Outcome = api.OutcomeLockHeld
	case Gone:
		n.Outcome = api.OutcomeGone
	default:
		n.Outcome = api.OutcomeFailed
	}
	if r.Outcome == DuplicateResponder && !strings.HasPrefix(n.Error, api.DuplicateResponderPrefix) {
		// The coordinator holds a node whose failed result starts so (cluster protocol 8); every
		// coordinator build takes it as a failure, where a new field or outcome would be refused.
		n.Error = api.DuplicateResponderPrefix + " " + n.Error
	}
	return n
}
