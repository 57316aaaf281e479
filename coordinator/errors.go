// SPDX-License-Identifier: Apache-2.0

package coordinator

import (
	"errors"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/coordinator/raftnode"
)

// Errors of the Service. They are the same values the ledger and raftnode return, so errors.Is
// works whichever layer wrapped them; messages name the lease, node or member concerned.
var (
	// ErrNotLeader: this member does not lead; send the request to LeaderAPIAddress (421 / forward).
	ErrNotLeader = raftnode.ErrNotLeader
	// ErrNoLeader: no leader is known right now (an election is running); retry shortly (503).
	ErrNoLeader = errors.New("no raft leader known")
	// ErrNotReady: this member just won leadership and is still catching up (Barrier, lease
	// extension); retry shortly (503).
	ErrNotReady = errors.New("leader not ready yet")
	// ErrUnknownLease: the lease is not outstanding (never granted, finished or expired) (404).
	ErrUnknownLease = ledger.ErrUnknownLease
	// ErrTokenMismatch: the token is not the lease's (409).
	ErrTokenMismatch = ledger.ErrTokenMismatch
	// ErrWrongRegion: the region does not match the lease or node (409).
	ErrWrongRegion = ledger.ErrWrongRegion
	// ErrWrongEdge: the lease is held by another edge, or the credential is bound to another edge
	// or region (403); nothing changed.
	ErrWrongEdge = ledger.ErrWrongEdge
	// ErrLeaseExpired: a renewal arrived after the lease's expiry (409; the edge must acquire again).
	ErrLeaseExpired = ledger.ErrLeaseExpired
	// ErrUnknownNode: no such node in the ledger (404).
	ErrUnknownNode = ledger.ErrUnknownNode
	// ErrNotRetryable: a node named for retry is leased, or not abandoned, gone, deferred or failed (409).
	ErrNotRetryable = ledger.ErrNotRetryable
	// ErrNodeBusy: an operator verb may not act on a node a lease holds or fences (409).
	ErrNodeBusy = ledger.ErrNodeBusy
	// ErrUnknownRegion: a retry names a region no node is in (404).
	ErrUnknownRegion = ledger.ErrUnknownRegion
	// ErrClusterProtocol: the outcome or command needs a cluster protocol some member does not
	// apply yet; it is refused until every member is upgraded (409); nothing changed.
	ErrClusterProtocol = ledger.ErrClusterProtocol
	// ErrOtherCluster: a joining member's data directory belongs to another cluster (409);
	// nothing changed.
	ErrOtherCluster = errors.New("data directory of another cluster")
	// ErrBadRequest: the ledger refused the command as invalid; nothing changed (400).
	ErrBadRequest = ledger.ErrBadCommand
	// ErrTimeout: the command was not committed in time; it may still apply (503).
	ErrTimeout = raftnode.ErrTimeout
	// ErrClosed: the member is shutting down (503).
	ErrClosed = raftnode.ErrShutdown
)
