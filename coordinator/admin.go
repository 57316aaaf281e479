// SPDX-License-Identifier: Apache-2.0

package coordinator

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/hashicorp/raft"
	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/pkg/api"
)

// Pause sets the replicated operator pause flag; edges learn it at their next poll or renewal.
func (s *Service) Pause(ctx context.Context, req api.PauseRequest) (api.PauseResponse, error) {
	return s.setPause(ctx, true, req.Reason)
}

// Resume clears the operator pause flag.
func (s *Service) Resume(ctx context.Context) (api.PauseResponse, error) {
	return s.setPause(ctx, false, "")
}

func (s *Service) setPause(ctx context.Context, paused bool, reason string) (api.PauseResponse, error) {
	if err := s.leaderOnly(); err != nil {
		return api.PauseResponse{}, err
	}
	now, err := s.stamp()
	if err != nil {
		return api.PauseResponse{}, fmt.Errorf("set pause to %t: %w", paused, err)
	}
	res, err := s.propose(ctx, &ledger.Pause{Now: now, Paused: paused, By: "operator", Reason: reason})
	if err != nil {
		return api.PauseResponse{}, fmt.Errorf("set pause to %t: %w", paused, err)
	}
	p := res.(*ledger.PauseState)
	return api.PauseResponse{Paused: p.Paused, Reason: p.Reason}, nil
}

// Status is this member's view: members (with whether it reaches each and when it last heard
// from it), leader, whether it sees a quorum, term, indexes, the cluster protocol and the one
// this member applies, pause and per-region counts. Any member answers it.
func (s *Service) Status(ctx context.Context) (api.StatusResponse, error) {
	resp := api.StatusResponse{
		ID: s.cfg.ID, State: s.node.State(), Term: s.node.Term(), CommitIndex: s.node.CommitIndex(),
		Regions: map[string]map[api.NodeState]int{}, Protocol: s.announced(), Warnings: slices.Clone(s.cfg.Warnings),
	}
	_, leaderID := s.node.Leader()
	resp.LeaderID = leaderID
	resp.Leader = s.LeaderAPIAddress()
	resp.RaftAddress, resp.LastIndex = s.node.Addr(), s.node.LastIndex()
	var err error
	if resp.ClusterID, err = s.ledger.ClusterID(); err != nil {
		return resp, err
	}
	if resp.AppliedIndex, _, err = s.ledger.AppliedIndex(); err != nil {
		return resp, err
	}
	if resp.ClusterProtocol, err = s.ledger.ClusterProtocol(); err != nil {
		return resp, err
	}
	addrs, err := s.ledger.Members()
	if err != nil {
		return resp, err
	}
	servers, err := s.node.Servers()
	if err != nil {
		return resp, err
	}
	for _, srv := range servers {
		m := api.Member{ID: string(srv.ID), RaftAddress: string(srv.Address), APIAddress: addrs[string(srv.ID)],
			Voter: srv.Suffrage == raft.Voter, Leader: string(srv.ID) == leaderID}
		if m.ID == s.cfg.ID {
			m.APIAddress = s.cfg.APIAddress
			reachable := true
			m.Reachable = &reachable
		} else {
			if rtt, ok := s.rtt.least(m.ID); ok {
				m.RoundTrip = api.Duration(rtt)
				resp.Warnings = append(resp.Warnings, s.roundTripWarnings(m.ID, rtt)...)
			}
			s.reach(&m, leaderID)
		}
		resp.Members = append(resp.Members, m)
	}
	slices.SortFunc(resp.Members, func(a, b api.Member) int { return cmp.Compare(a.ID, b.ID) })
	s.quorum(&resp)
	p, err := s.ledger.Pause()
	if err != nil {
		return resp, err
	}
	resp.Paused, resp.PauseReason = p.Paused, p.Reason
	if h, held, err := s.leases.Load().GrantHold(); err != nil {
		return resp, err
	} else if held {
		resp.GrantsHeld = &api.GrantHold{Until: h.Until, Reason: h.Reason, Remaining: api.Duration(h.Remaining)}
	}
	if resp.LeasesActive, err = s.ledger.LeaseCount(); err != nil {
		return resp, err
	}
	counts, err := s.ledger.Counts()
	if err != nil {
		return resp, err
	}
	resp.Regions = counts
	return resp, nil
}

// Nodes lists one page of nodes from this member's ledger, without history.
func (s *Service) Nodes(ctx context.Context, f api.NodeFilter) (api.NodesResponse, error) {
	nodes, next, err := s.ledger.Nodes(ledger.NodeFilter{Region: f.Region, State: f.State, After: f.After, Limit: f.Limit})
	if err != nil {
		return api.NodesResponse{}, fmt.Errorf("list nodes: %w", err)
	}
	resp := api.NodesResponse{Nodes: make([]api.Node, 0, len(nodes)), Next: next}
	for i := range nodes {
		resp.Nodes = append(resp.Nodes, toAPINode(&nodes[i]))
	}
	return resp, nil
}

// Node returns one node with its history, or ErrUnknownNode.
func (s *Service) Node(ctx context.Context, identity string) (api.Node, error) {
	n, err := s.ledger.Node(identity)
	if err != nil {
		return api.Node{}, err
	}
	return toAPINode(n), nil
}

// Join adds a member to the Raft configuration and records its API address. A learner (a member
// that started without Raft state) goes non-voter, then voter (admitLearner); any other request
// adds the member as it asks, as before learners existed.
func (s *Service) Join(ctx context.Context, req api.JoinRequest) (api.JoinResponse, error) {
	if err := s.leaderOnly(); err != nil {
		return api.JoinResponse{}, err
	}
	// A member that comes back with a new address is replaced, not duplicated; that must never
	// be the leader itself, which would drop out of its own configuration. (Joining with exactly
	// its own id and address stays a no-op, as a restarted member's --join may land on itself.)
	self := s.node.Addr()
	if (req.ID == s.cfg.ID) != (req.RaftAddress == self) {
		return api.JoinResponse{}, fmt.Errorf("join %s at %s: %w: the leader is %s at %s; a join may not replace it", req.ID, req.RaftAddress, ErrBadRequest, s.cfg.ID, self)
	}
	// A member that says it applies less than the cluster already runs would refuse entries the
	// others apply (or halt at them): the protocol never goes back down. protocolMu is held from
	// the check until the join is done, so a raise in flight is in the ledger before the check,
	// or asks the member.
	s.protocolMu.Lock()
	defer s.protocolMu.Unlock()
	cur, err := s.ledger.ClusterProtocol()
	if err != nil {
		return api.JoinResponse{}, fmt.Errorf("join %s: read cluster protocol: %w", req.ID, err)
	}
	if err := checkJoinProtocol(req, cur); err != nil {
		return api.JoinResponse{}, err
	}
	clusterID, err := s.checkCluster(req)
	if err != nil {
		return api.JoinResponse{}, err
	}
	var resp api.JoinResponse
	if req.Learner && !req.NonVoter && req.ID != s.cfg.ID {
		resp, err = s.admitLearner(req)
	} else {
		err = s.node.Join(req.ID, req.RaftAddress, req.NonVoter)
		resp.Voter = !req.NonVoter
	}
	if err != nil {
		return api.JoinResponse{}, err
	}
	resp.ClusterID = clusterID
	if err := s.recordMember(ctx, req.ID, req.APIAddress); err != nil {
		return api.JoinResponse{}, err
	}
	return resp, nil
}

// recordMember records member id's API address unless the ledger holds it already (a learner
// asks again and again while it catches up).
func (s *Service) recordMember(ctx context.Context, id, apiAddress string) error {
	if addrs, err := s.ledger.Members(); err == nil {
		if addr, ok := addrs[id]; ok && addr == apiAddress {
			return nil
		}
	}
	if _, err := s.propose(ctx, &ledger.Member{ID: id, APIAddress: apiAddress}); err != nil {
		return fmt.Errorf("record api address of %s: %w", id, err)
	}
	return nil
}

// Remove takes a member out of the Raft configuration and forgets its API address.
func (s *Service) Remove(ctx context.Context, req api.RemoveRequest) error {
	if err := s.leaderOnly(); err != nil {
		return err
	}
	servers, err := s.node.Servers()
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(servers, func(srv raft.Server) bool { return string(srv.ID) == req.ID }) {
		return fmt.Errorf("remove member %q: %w: not in the configuration", req.ID, ErrBadRequest)
	}
	if _, err := s.propose(ctx, &ledger.Member{ID: req.ID, Remove: true}); err != nil {
		return fmt.Errorf("forget api address of %s: %w", req.ID, err)
	}
	return s.node.Remove(req.ID)
}

// Snapshot takes a Raft snapshot of this member now.
func (s *Service) Snapshot(ctx context.Context) (api.SnapshotResponse, error) {
	meta, err := s.node.Snapshot()
	if err != nil {
		return api.SnapshotResponse{}, err
	}
	return api.SnapshotResponse{ID: meta.ID, Index: meta.Index, Term: meta.Term, Size: meta.Size, At: s.clock.Now()}, nil
}
