// SPDX-License-Identifier: Apache-2.0

package coordinator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/pkg/api"
)

// Why a cluster protocol, and why the leader raises it (etcd's monitorVersions does the same
// with its cluster version): an older member refuses what a newer one applies (the released and
// gone outcomes) and halts at what it does not know (retry), so a feature may enter the log only
// once every member can apply it. Members gate such features on the protocol their ledger has
// applied (ledger.Protocol), which makes the decision part of the log; the leader asks every
// member of the Raft configuration what it can apply and proposes the lowest answer. A member
// that does not answer, has no recorded API address, or answers without a protocol (a build from
// before protocols: 1) holds the cluster where it is. Nothing lowers it: downgrades are not
// supported once it is raised. What each protocol adds, and the oldest a build runs beside, are
// in ledger/versions.go.

// defaultProtocolInterval is how often a leader asks the members while the protocol can rise.
const defaultProtocolInterval = 2 * time.Second

// protocolAskTimeout bounds one member's answer, so a member cut off delays only its own round.
const protocolAskTimeout = 2 * time.Second

// announced is the protocol this member tells the leader it applies.
func (s *Service) announced() int {
	if s.cfg.AnnounceProtocol > 0 {
		return s.cfg.AnnounceProtocol
	}
	return ledger.Protocol
}

// ClusterProtocol is the cluster protocol this member's ledger has applied.
func (s *Service) ClusterProtocol() (int, error) { return s.ledger.ClusterProtocol() }

// memberProtocol is what one member of the configuration answered; Version 0 when it did not.
type memberProtocol struct {
	ID      string
	Version int
	Err     error
}

func (m memberProtocol) String() string {
	if m.Err != nil {
		return m.ID + "=?"
	}
	return fmt.Sprintf("%s=%d", m.ID, m.Version)
}

// monitorProtocol raises the cluster protocol while this member leads, until it is as high as
// this member can apply (no member answer could raise it further). It returns when ctx ends.
func (s *Service) monitorProtocol(ctx context.Context) {
	t := time.NewTicker(s.cfg.ProtocolInterval)
	defer t.Stop()
	var held string
	for {
		cur, err := s.ledger.ClusterProtocol()
		if err == nil && cur >= s.announced() {
			return
		}
		if raised, members, err := s.raiseProtocol(ctx, true); err != nil && ctx.Err() == nil {
			s.log.Warn("raise cluster protocol", "error", err)
		} else if !raised && members != held {
			// Once per change of answers, not every interval.
			s.log.Info("cluster protocol held: not every member applies a newer one", "cluster_protocol", cur, "members", members)
			held = members
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// raiseProtocol asks every member of the configuration for its protocol (others over HTTP only
// when ask is set) and proposes the lowest answer if it is above the cluster's. It returns
// whether it proposed and the answers, for the log.
func (s *Service) raiseProtocol(ctx context.Context, ask bool) (bool, string, error) {
	// Held from the read of the configuration to the proposal: a member that joined between them
	// would not be asked, and the proposal could pass it (Service.Join).
	s.protocolMu.Lock()
	defer s.protocolMu.Unlock()
	cur, err := s.ledger.ClusterProtocol()
	if err != nil {
		return false, "", err
	}
	servers, err := s.node.Servers()
	if err != nil {
		return false, "", fmt.Errorf("read configuration: %w", err)
	}
	addrs, err := s.ledger.Members()
	if err != nil {
		return false, "", fmt.Errorf("read member addresses: %w", err)
	}
	answers := make([]memberProtocol, len(servers))
	var wg sync.WaitGroup
	for i, srv := range servers {
		id := string(srv.ID)
		answers[i].ID = id
		switch {
		case id == s.cfg.ID:
			answers[i].Version = s.announced()
		case !ask:
			answers[i].Err = errors.New("not asked")
		default:
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers[i].Version, answers[i].Err = s.askProtocol(ctx, id, addrs[id])
			}()
		}
	}
	wg.Wait()
	v := ledger.Protocol
	for _, a := range answers {
		if a.Err != nil {
			v = 0
			break
		}
		v = min(v, a.Version)
	}
	slices.SortFunc(answers, func(a, b memberProtocol) int { return strings.Compare(a.ID, b.ID) })
	parts := make([]string, len(answers))
	for i, a := range answers {
		parts[i] = a.String()
	}
	members := strings.Join(parts, " ")
	if v <= cur {
		return false, members, nil
	}
	// A member that joins after the proposal is checked against it (Service.Join).
	res, err := s.propose(ctx, &ledger.SetProtocol{Version: v})
	if err != nil {
		return false, members, fmt.Errorf("propose cluster protocol %d: %w", v, err)
	}
	if r, ok := res.(*ledger.ProtocolResult); ok && r.Raised {
		s.log.Info("cluster protocol raised", "from", cur, "to", r.Version, "members", members)
	}
	return true, members, nil
}

// askProtocol reads the protocol member id announces in its status at addr.
func (s *Service) askProtocol(ctx context.Context, id, addr string) (int, error) {
	if addr == "" {
		return 0, fmt.Errorf("member %s: no API address recorded", id)
	}
	c, err := api.NewClient([]string{addr}, api.WithToken(s.cfg.AdminToken), api.WithHTTPClient(s.cfg.MemberClient), api.WithAttempts(1))
	if err != nil {
		return 0, fmt.Errorf("member %s: %w", id, err)
	}
	actx, cancel := context.WithTimeout(ctx, protocolAskTimeout)
	defer cancel()
	st, err := c.StatusOf(actx, addr)
	if err != nil {
		return 0, fmt.Errorf("member %s: %w", id, err)
	}
	if st.ID != id {
		return 0, fmt.Errorf("member %s: %s answers as %q", id, addr, st.ID)
	}
	// A build from before protocols sends none: it applies protocol 1.
	return max(st.Protocol, 1), nil
}

// checkJoinProtocol refuses a member that says it applies less than the cluster protocol cur, or
// less than the oldest protocol this build runs beside (ledger.OldestProtocol). One that says
// nothing is asked by the leader's next raise, and holds the cluster where it is.
func checkJoinProtocol(req api.JoinRequest, cur int) error {
	switch {
	case req.Protocol <= 0:
		return nil
	case req.Protocol < cur:
		return fmt.Errorf("join %s: %w: it applies cluster protocol up to %d and the cluster runs %d; upgrade it first", req.ID, ErrClusterProtocol, req.Protocol, cur)
	case req.Protocol < ledger.OldestProtocol:
		return fmt.Errorf("join %s: %w: it applies cluster protocol up to %d and this muster-coordinator runs beside members from protocol %d on; upgrade it to a build of protocol %d first", req.ID, ErrClusterProtocol, req.Protocol, ledger.OldestProtocol, ledger.OldestProtocol)
	}
	return nil
}

// checkProtocolForRetry refuses a retry the cluster cannot apply on every member yet.
func (s *Service) checkProtocolForRetry() error {
	if err := s.ledger.CheckRetry(); err != nil {
		return fmt.Errorf("member %s: %w", s.cfg.ID, err)
	}
	return nil
}
