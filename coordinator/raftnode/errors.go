// SPDX-License-Identifier: Apache-2.0

package raftnode

import (
	"errors"
	"fmt"

	"github.com/hashicorp/raft"
)

// Errors mapped from raft's, so callers need not import raft to use errors.Is.
var (
	// ErrNotLeader means this member is not the leader; the request belongs on the leader.
	ErrNotLeader = errors.New("not the raft leader")
	// ErrShutdown means the member is shutting down or shut down.
	ErrShutdown = errors.New("raft is shut down")
	// ErrTimeout means the request was not committed in time; it may still be applied later.
	ErrTimeout = errors.New("raft apply timed out")
	// ErrNoState means the member has no Raft state and was told neither to bootstrap nor to join.
	ErrNoState = errors.New("no raft state")
)

func mapRaftError(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipLost),
		errors.Is(err, raft.ErrLeadershipTransferInProgress), errors.Is(err, raft.ErrNotVoter):
		return fmt.Errorf("%s: %w (%v)", op, ErrNotLeader, err)
	case errors.Is(err, raft.ErrRaftShutdown):
		return fmt.Errorf("%s: %w", op, ErrShutdown)
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return fmt.Errorf("%s: %w", op, ErrTimeout)
	}
	return fmt.Errorf("%s: %w", op, err)
}
