// SPDX-License-Identifier: Apache-2.0

package coordinator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/pkg/api"
)

// How a member joins (coordinator/DESIGN.md, "Members"): a member that starts without Raft state
// has no vote (raftnode's vote gate) and asks the leader, through serve's join, until it is a
// voter. The leader replaces whatever entry the member had (the voter it was before it lost its
// disk, most likely) with a non-voter, and promotes it once it has applied the entry that made
// it one: it then holds every entry committed before its admission, and its old acknowledgements
// no longer count anywhere. Every member's data directory names its cluster (its ledger's cluster
// id), and a join between two clusters is refused on both sides.

// JoinRequest is what this member asks the leader when it joins: a learner says so, with its
// progress; any member sends the cluster its data directory belongs to, if it names one.
func (s *Service) JoinRequest() (api.JoinRequest, error) {
	req := api.JoinRequest{ID: s.cfg.ID, RaftAddress: s.node.Addr(), APIAddress: s.cfg.APIAddress, Protocol: s.announced()}
	var err error
	if req.ClusterID, err = s.ledger.ClusterID(); err != nil {
		return req, fmt.Errorf("join request: read cluster id: %w", err)
	}
	if s.node.Learner() {
		req.Learner = true
		req.LearnerSince = s.node.LearnerSince()
		if req.AppliedIndex, _, err = s.ledger.AppliedIndex(); err != nil {
			return req, fmt.Errorf("join request: read applied index: %w", err)
		}
	}
	return req, nil
}

// Joined takes the leader's answer to req: it refuses an answer from another cluster, records a
// learner's progress and opens its vote once the leader says it is a voter. done says there is
// nothing left to ask.
func (s *Service) Joined(req api.JoinRequest, resp api.JoinResponse) (done bool, err error) {
	if resp.ClusterID != "" && req.ClusterID != "" && resp.ClusterID != req.ClusterID {
		return false, fmt.Errorf("member %s: %w: its data directory %s belongs to cluster %s and the leader it joined leads cluster %s",
			s.cfg.ID, ErrOtherCluster, s.cfg.DataDir, req.ClusterID, resp.ClusterID)
	}
	if !req.Learner || req.NonVoter {
		return true, nil
	}
	if resp.Voter && resp.ConfigIndex > 0 {
		return true, s.node.Promoted()
	}
	if resp.ConfigIndex > 0 {
		return false, s.node.SetLearnerSince(resp.ConfigIndex)
	}
	return false, nil
}

// IsMember reports whether this member needs no join: its own Raft configuration holds it under
// its id and address and it has its vote (or never lost it).
func (s *Service) IsMember() (bool, error) {
	if s.node.Learner() {
		return false, nil
	}
	return s.node.InConfiguration()
}

// Learner reports whether this member has no vote yet: it started without Raft state and the
// leader has not promoted it.
func (s *Service) Learner() bool { return s.node.Learner() }

// ClusterID is the id of the cluster this member's ledger belongs to, empty while it names none.
func (s *Service) ClusterID() (string, error) { return s.ledger.ClusterID() }

// checkCluster refuses a join from a member whose data directory belongs to another cluster; it
// returns this cluster's id.
func (s *Service) checkCluster(req api.JoinRequest) (string, error) {
	own, err := s.ledger.ClusterID()
	if err != nil {
		return "", fmt.Errorf("join %s: read cluster id: %w", req.ID, err)
	}
	if req.ClusterID != "" && own != "" && req.ClusterID != own {
		return "", fmt.Errorf("join %s: %w: its data directory belongs to cluster %s and this is cluster %s; start it with an empty data directory to join this one, or join it to cluster %s",
			req.ID, ErrOtherCluster, req.ClusterID, own, req.ClusterID)
	}
	return own, nil
}

// admitLearner takes a learner one step further: a member that is not a non-voter of this
// configuration at its address becomes one (its old entry removed), a non-voter that has applied
// the entry that made it one is promoted, and a voter promoted since its last answer is told so.
// Each answer names a committed configuration, or none (ConfigIndex 0: ask again).
func (s *Service) admitLearner(req api.JoinRequest) (api.JoinResponse, error) {
	servers, idx, err := s.node.Configuration()
	if err != nil {
		return api.JoinResponse{}, err
	}
	var entry *raft.Server
	for i := range servers {
		if string(servers[i].ID) == req.ID && string(servers[i].Address) == req.RaftAddress {
			entry = &servers[i]
		}
	}
	committed := s.node.CommitIndex() >= idx
	switch {
	case entry != nil && !committed:
		return api.JoinResponse{}, nil
	case entry != nil && entry.Suffrage == raft.Voter && req.LearnerSince > 0 && idx > req.LearnerSince:
		return api.JoinResponse{Voter: true, ConfigIndex: idx}, nil
	case entry != nil && entry.Suffrage == raft.Nonvoter:
		if req.LearnerSince == 0 || req.AppliedIndex < req.LearnerSince {
			return api.JoinResponse{ConfigIndex: idx}, nil
		}
		at, err := s.node.Promote(req.ID, req.RaftAddress)
		if err != nil {
			return api.JoinResponse{}, err
		}
		s.log.Info("promoted a learner to voter", "member", req.ID, "applied", req.AppliedIndex, "config_index", at)
		return api.JoinResponse{Voter: true, ConfigIndex: at}, nil
	}
	// Absent, at another address, or a voter entry from before the member's last answer: the
	// member as it was before it lost its state. It counts no more once it is a non-voter.
	at, err := s.node.AddLearner(req.ID, req.RaftAddress)
	if err != nil {
		return api.JoinResponse{}, err
	}
	s.log.Info("took in a member without Raft state as a non-voter", "member", req.ID, "config_index", at)
	return api.JoinResponse{ConfigIndex: at}, nil
}

// nameCluster gives the cluster its id once it runs ledger.ClusterIDProtocol and has none: at once for a
// new cluster, when the last member is upgraded for an older one. It retries until the id is
// recorded or ctx ends.
func (s *Service) nameCluster(ctx context.Context) {
	for {
		id, err := s.ledger.ClusterID()
		if err == nil && id != "" {
			return
		}
		cur, perr := s.ledger.ClusterProtocol()
		if err == nil && perr == nil && cur < ledger.ClusterIDProtocol {
			return // held by an older member; a later leadership names it
		}
		if err == nil && perr == nil {
			if _, err = s.propose(ctx, &ledger.SetProtocol{Version: cur, ClusterID: newClusterID()}); err == nil {
				id, _ := s.ledger.ClusterID()
				s.log.Info("cluster named", "cluster_id", id)
				return
			}
		}
		if ctx.Err() != nil {
			return
		}
		s.log.Warn("name the cluster", "error", cmpErr(err, perr))
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func newClusterID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b[:])
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
