// SPDX-License-Identifier: Apache-2.0

package ledger

import "github.com/seed96588659/muster/pkg/api"

// The cluster protocol is the set of rules by which every member applies the log. A member of an
// older build refuses what a newer one applies (an outcome it does not know, as bad input) and
// halts at a command type it does not know, so during a rolling upgrade their ledgers would
// diverge. Each rule that changes how an entry is applied is therefore gated on the protocol the
// ledger it applies to holds (meta/protocol), never on the build; the leader raises that protocol
// through the log only once every member of the configuration announces it can apply it
// (coordinator/protocol.go), and it never goes down. A member halts at an entry, and refuses a
// snapshot or a ledger file, of a protocol above Protocol ("needs a newer muster-coordinator").
//
// # Version history
//
// Each gate below is the protocol from which its rule applies; below it the rule before applies,
// exactly as the builds before applied it.
//
// 1: the builds before cluster protocols: commands register, grant, renew, report, expire,
// extend, pause and member (1..8) and every outcome but released and gone. A ledger without
// meta/protocol reads as 1, and so does a new one until its first leader raises it.
//
// 2: the released and gone outcomes (outcomeProtocol); retry (9, retryProtocol) and protocol
// (10, setProtocolProtocol); a late result of a lease that already reported a result for the
// node is refused (lateRuleProtocol).
//
// 3: operator commands forget, ban, unban and move (11, operatorProtocol); the event log
// (eventsProtocol); fences: a node a late result takes out of a live lease stays fenced by it
// until it ends (fenceProtocol); a registration never moves a known node to another region
// (regionProtocol); a gone result after a stale sighting keeps the node's recorded result
// (staleSightingProtocol); a failed node waiting for its backoff may be retried
// (retryFailedProtocol).
//
// 4: a lease that ends gives the nodes it fences its edge's lock window from the lease's end
// (fenceLockProtocol).
//
// 5: events are stored as binary records instead of JSON (eventRecordProtocol).
//
// 6: acquire (12, AcquireProtocol): an edge's reports and its next grant in one entry, which the
// lessor then proposes instead of a report and a grant apart; a late result keeps another edge's
// live lock window (lateLockProtocol).
//
// 7: hold (13, HoldProtocol): no new grant after a recover until a time (hold.go); the ledger
// records the cluster's id a SetProtocol names (ClusterIDProtocol); a lock_held result's window
// is a lock no edge holds, which retry and forget keep (heldLockProtocol); a late result's region
// is the node's region at its grant, before any move (lateMoveProtocol); unban returns a node to
// its state before the ban (unbanRestoreProtocol).
//
// 8: the held state (HeldProtocol): a registration holds a node under the approval policy the
// leader stamps into it (first-seen nodes of a manual region, a provisioned identity back in
// provisioning mode, a flapping one), and a failed result naming a second responder holds its
// node (duplicateHoldProtocol); the operator verb approve (approveProtocol); a late result never
// lifts a hold.
//
// # The oldest protocol a build accepts
//
// A build applies the rules of every protocol from 1, and must: a log replayed from its start
// runs at 1 until its first SetProtocol, whatever build wrote it. What it does not promise is to
// run beside every older build. OldestProtocol is the previous protocol, the one the rolling
// upgrade test starts from, as etcd upgrades one minor version at a time and hashicorp/raft's
// version N+1 requires N: an older pairing is not tested, and an operator two protocols
// behind upgrades through the build in between. So a leader of this build refuses a member that
// announces less (Service.Join), and this build does not start on a ledger its cluster had raised
// to a protocol in between (Open), saying which build to upgrade through. (A member stopped while
// it replayed such a history from the log's start is refused too; with its ledger moved aside it
// replays again.)
//
// # The next protocol
//
// Add its line above and a gate below, named by the rule it adds; a new command type goes in
// commandProtocol (TestVersions_EveryGateIsInTheTable fails otherwise). Raise Protocol to it and
// OldestProtocol to the one before it, and move the rolling upgrade test to the last commit of
// the one before it. Say what it adds in docs/upgrades.md.
const (
	// Protocol is the newest cluster protocol this build applies.
	Protocol = 8
	// OldestProtocol is the oldest cluster protocol this build runs in, beside members of it.
	OldestProtocol = 7
)

// The gates: the cluster protocol from which each rule applies.
const (
	releasedGoneProtocol  = 2 // the released and gone outcomes
	retryProtocol         = 2 // Retry (type 9)
	setProtocolProtocol   = 2 // SetProtocol (type 10)
	lateRuleProtocol      = 2 // a late result of a lease that reported a result for the node is refused
	operatorProtocol      = 3 // Operator (type 11): forget, ban, unban, move
	eventsProtocol        = 3 // members record the event log
	fenceProtocol         = 3 // a node a late result takes out of a live lease stays fenced by it
	regionProtocol        = 3 // a registration never moves a known node to another region
	staleSightingProtocol = 3 // a gone result after a stale sighting keeps the node's result
	retryFailedProtocol   = 3 // a failed node waiting for its backoff may be retried
	fenceLockProtocol     = 4 // an ending lease gives the nodes it fences its lock window
	eventRecordProtocol   = 5 // events stored as binary records
	AcquireProtocol       = 6 // Acquire (type 12): reports and a grant in one entry
	lateLockProtocol      = 6 // a late result keeps another edge's live lock window
	HoldProtocol          = 7 // Hold (type 13): no new grant after a recover until a time
	ClusterIDProtocol     = 7 // a SetProtocol's cluster id is recorded
	heldLockProtocol      = 7 // a lock_held result's window is a lock that retry and forget keep
	lateMoveProtocol      = 7 // a late result is checked against the region of its grant
	unbanRestoreProtocol  = 7 // unban returns a node to its state before the ban
	HeldProtocol          = 8 // a registration holds nodes under its stamped approval policy
	duplicateHoldProtocol = 8 // a failed result naming a second responder holds its node
	approveProtocol       = 8 // the operator verb approve: held -> waiting
)

// commandProtocol is the cluster protocol that first applies command type t, 0 for a type this
// build does not know.
func commandProtocol(t CommandType) int {
	switch t &^ IgnoreUnknown {
	case CmdRegister, CmdGrant, CmdRenew, CmdReport, CmdExpire, CmdExtend, CmdPause, CmdMember:
		return 1
	case CmdRetry:
		return retryProtocol
	case CmdProtocol:
		return setProtocolProtocol
	case CmdOperator:
		return operatorProtocol
	case CmdAcquire:
		return AcquireProtocol
	case CmdHold:
		return HoldProtocol
	}
	return 0
}

// outcomeProtocol is the cluster protocol that first records outcome o.
func outcomeProtocol(o api.Outcome) int {
	switch o {
	case api.OutcomeReleased, api.OutcomeGone:
		return releasedGoneProtocol
	}
	return 1
}
