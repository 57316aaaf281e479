// SPDX-License-Identifier: Apache-2.0

package raftnode

import "github.com/hashicorp/raft"

// FSM is the state machine a member's Raft applies committed entries to. It keeps its own durable
// storage, which its owner opens and closes, and says which entry that storage holds, so raft need
// not restore a snapshot into it at every start (catchUpFromSnapshot).
type FSM interface {
	raft.FSM
	// AppliedIndex is the index and term of the last entry the FSM's storage holds.
	AppliedIndex() (index, term uint64, err error)
}
