// SPDX-License-Identifier: Apache-2.0

package raftnode

import (
	"errors"
	"fmt"

	"github.com/hashicorp/raft"
)

// ErrHasState means a bootstrap found the member with Raft state already (a leader reached it
// first): it is in a cluster and must join it instead.
var ErrHasState = errors.New("has raft state already")

// HasState reports whether the member has Raft state: a log, a term or a snapshot.
func (n *Node) HasState() (bool, error) {
	has, err := raft.HasExistingState(n.store, n.store, n.snaps)
	if err != nil {
		return false, fmt.Errorf("member %s: check state: %w", n.cfg.ID, err)
	}
	return has, nil
}

// LastIndex is the index of the last entry of the member's Raft log (0 without one).
func (n *Node) LastIndex() uint64 { return n.raft.LastIndex() }

// BootstrapWith makes a member that started without Raft state (behind its vote gate, as a
// joining member does) one of the voters of a new cluster of peers, itself among them; each of
// them bootstraps the same configuration (raft's multi-member bootstrap). The configuration is
// recorded first, then the gate opens: a member that never had state has no acknowledgement to
// have lost. It returns ErrHasState when the member got state meanwhile.
func (n *Node) BootstrapWith(peers []Peer) error {
	conf := raft.Configuration{}
	self := false
	for _, p := range peers {
		conf.Servers = append(conf.Servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.Address)})
		self = self || (p.ID == n.cfg.ID && raft.ServerAddress(p.Address) == n.trans.LocalAddr())
	}
	if !self {
		return fmt.Errorf("member %s: bootstrap: the peers %v do not hold this member at %s", n.cfg.ID, peers, n.trans.LocalAddr())
	}
	if err := n.raft.BootstrapCluster(conf).Error(); err != nil {
		if errors.Is(err, raft.ErrCantBootstrap) {
			return fmt.Errorf("member %s: bootstrap: %w", n.cfg.ID, ErrHasState)
		}
		return mapRaftError(fmt.Sprintf("member %s: bootstrap", n.cfg.ID), err)
	}
	if err := n.gate.open(); err != nil {
		return err
	}
	n.log.Info("bootstrapped a new cluster", "voters", len(peers))
	return nil
}
