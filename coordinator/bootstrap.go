// SPDX-License-Identifier: Apache-2.0

package coordinator

import "github.com/seed96588659/muster/coordinator/raftnode"

// A member started with bootstrap_expect opens as a joining member does (no vote while it has
// no Raft state) and serves its status, so that the members it expects can count it; serve
// then either bootstraps it with them (BootstrapWith) or joins it to the cluster it finds.

// HasRaftState reports whether this member has Raft state (a log, a term or a snapshot).
func (s *Service) HasRaftState() (bool, error) { return s.node.HasState() }

// BootstrapWith makes this member, still without Raft state, a voter of a new cluster of peers
// (itself among them); every one of them bootstraps the same peers. It returns an error wrapping
// raftnode.ErrHasState when a leader reached the member first.
func (s *Service) BootstrapWith(peers []raftnode.Peer) error { return s.node.BootstrapWith(peers) }
