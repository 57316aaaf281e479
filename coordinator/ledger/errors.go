// SPDX-License-Identifier: Apache-2.0

package ledger

import "errors"

// Errors returned in apply results and by queries; callers compare them with errors.Is.
var (
	// ErrUnknownCommand means a command type this version does not know and that may not be ignored.
	ErrUnknownCommand = errors.New("unknown ledger command")
	// ErrBadCommand means a command failed validation; nothing was changed.
	ErrBadCommand = errors.New("invalid ledger command")
	// ErrUnknownLease means the lease does not exist (never granted, finished or expired).
	ErrUnknownLease = errors.New("unknown lease")
	// ErrTokenMismatch means the fencing token is not the lease's current token.
	ErrTokenMismatch = errors.New("lease token mismatch")
	// ErrLeaseExpired means the lease's expiry has passed and it can no longer be renewed.
	ErrLeaseExpired = errors.New("lease expired")
	// ErrWrongRegion means a node or request names a region other than the lease's or the node's.
	ErrWrongRegion = errors.New("wrong region")
	// ErrWrongEdge means the request comes from another edge than the one holding the lease.
	ErrWrongEdge = errors.New("wrong edge")
	// ErrNotInLease means the node is not held by the lease the result was reported under.
	ErrNotInLease = errors.New("node not held by this lease")
	// ErrUnknownNode means the node is not in the ledger.
	ErrUnknownNode = errors.New("unknown node")
	// ErrNotRetryable means the node is leased (a worker may be on it) or not in a state an
	// operator's retry moves (abandoned, gone, deferred), or left it since it was selected.
	ErrNotRetryable = errors.New("node not retryable")
	// ErrNodeBusy means an operator verb may not act on the node now: a lease holds or fences
	// it, or it is in no state the verb changes.
	ErrNodeBusy = errors.New("node not available to the operator")
	// ErrUnknownRegion means no node of the ledger is in that region.
	ErrUnknownRegion = errors.New("unknown region")
	// ErrClusterProtocol means the cluster protocol is too old for the outcome or command: some
	// member may not apply it yet; nothing changed.
	ErrClusterProtocol = errors.New("not supported by the cluster yet")
	// ErrPaused means the operator paused provisioning, so no lease is granted.
	ErrPaused = errors.New("provisioning paused")
	// ErrHeld means new grants are held after a recover (Hold) until a time the error names.
	ErrHeld = errors.New("grants held after a recover")
	// ErrInUse means another process holds the ledger file open: a member runs on it. It is not
	// damage, and the file must be left where it is.
	ErrInUse = errors.New("ledger file in use by another process")
	// ErrClosed means the ledger was closed.
	ErrClosed = errors.New("ledger closed")
)

// Refused reports whether err is the ledger's answer to a command it applied as a refusal (the
// entry committed and changed nothing), rather than a failure to get the command applied.
func Refused(err error) bool {
	for _, e := range []error{ErrBadCommand, ErrUnknownLease, ErrTokenMismatch, ErrLeaseExpired, ErrWrongRegion, ErrWrongEdge,
		ErrNotInLease, ErrUnknownNode, ErrNotRetryable, ErrNodeBusy, ErrUnknownRegion, ErrClusterProtocol, ErrPaused, ErrHeld} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
