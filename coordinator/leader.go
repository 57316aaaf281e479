// SPDX-License-Identifier: Apache-2.0

package coordinator

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/coordinator/lessor"
)

// monitorLeadership starts the leader loop when this member gains leadership and stops it when it
// loses it (Nomad's pattern).
func (s *Service) monitorLeadership() {
	defer s.wg.Done()
	var (
		stop context.CancelFunc
		wg   sync.WaitGroup
		// term is the term whose leadership the running leader loop established.
		term uint64
	)
	stopLeader := func() {
		if stop != nil {
			stop()
			wg.Wait()
			stop = nil
			s.metrics.LeadershipChanges.Inc()
			s.log.Info("leadership lost")
		}
	}
	for {
		select {
		case <-s.closing:
			stopLeader()
			return
		case <-s.node.LeadershipChanges():
		}
		// Term before IsLeader: a term read after could belong to a later election.
		now := s.node.Term()
		leader := s.node.IsLeader()
		if stop != nil && leader && now != term {
			// Lost and won again while this loop was not looking (values coalesce): the leader
			// loop of the old term did not Barrier or extend leases for this one.
			stopLeader()
		}
		switch {
		case leader && stop == nil:
			term = now
			ctx, cancel := context.WithCancel(context.Background())
			stop = cancel
			wg.Add(1)
			s.metrics.LeadershipChanges.Inc()
			s.log.Info("leadership gained", "term", s.node.Term())
			go func() {
				defer wg.Done()
				s.leaderLoop(ctx)
			}()
		case !leader:
			stopLeader()
		}
	}
}

// leaderLoop establishes leadership, retrying until it holds or is lost, raises the cluster
// protocol while it can rise (monitorProtocol), then waits for the loss of leadership and revokes
// it.
func (s *Service) leaderLoop(ctx context.Context) {
	mgr := s.leases.Load()
	defer s.revokeLeadership(mgr)
	for {
		err := s.establishLeadership(ctx, mgr)
		if err == nil {
			break
		}
		s.log.Warn("establish leadership", "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
	s.ready.Store(true)
	s.log.Info("leadership established", "term", s.node.Term())
	s.monitorProtocol(ctx)
	s.nameCluster(ctx)
	<-ctx.Done()
}

// revokeLeadership undoes exactly what establishLeadership and the leadership did: this member
// is no longer ready, its lease manager stops (expiry loop, time anchor, waiting long polls) and
// the edges' heartbeats it heard are forgotten, since a new leader hears them afresh.
func (s *Service) revokeLeadership(mgr *lessor.Manager) {
	s.ready.Store(false)
	mgr.Disable()
	s.edges.clear()
}

// establishLeadership runs the steps of a new leadership in order: Barrier so the ledger holds
// every committed entry, record this member's API address, raise the cluster protocol when this
// member is the only one, extend outstanding leases and enable the lease manager. A failed step starts them all again.
func (s *Service) establishLeadership(ctx context.Context, mgr *lessor.Manager) error {
	if err := s.node.Barrier(10 * time.Second); err != nil {
		return fmt.Errorf("barrier on new leadership: %w", err)
	}
	if err := s.recordSelf(ctx); err != nil {
		return fmt.Errorf("record member address: %w", err)
	}
	// Alone in the configuration nobody needs asking: a new single-member cluster runs the newest
	// protocol before it is ready. With others, monitorProtocol asks them once this is done.
	if _, _, err := s.raiseProtocol(ctx, false); err != nil {
		return fmt.Errorf("raise cluster protocol: %w", err)
	}
	if err := mgr.Enable(ctx); err != nil {
		return fmt.Errorf("enable lease manager: %w", err)
	}
	return nil
}

func (s *Service) recordSelf(ctx context.Context) error {
	m, err := s.ledger.Members()
	if err != nil {
		return err
	}
	if addr, ok := m[s.cfg.ID]; ok && addr == s.cfg.APIAddress {
		return nil
	}
	_, err = s.propose(ctx, &ledger.Member{ID: s.cfg.ID, APIAddress: s.cfg.APIAddress})
	return err
}
