// SPDX-License-Identifier: Apache-2.0

package coordinator

import (
	"context"
	"sync"
	"time"

	"github.com/seed96588659/muster/coordinator/ledger"
)

// monitorLeadership starts the leader loop when this member gains leadership and stops it when it
// loses it (Nomad's pattern).
func (s *Service) monitorLeadership() {
	defer s.wg.Done()
	var (
		stop context.CancelFunc
		wg   sync.WaitGroup
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
		leader := s.node.IsLeader()
		switch {
		case leader && stop == nil:
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

// leaderLoop establishes leadership: Barrier so the ledger holds every committed entry, record
// this member's API address, extend outstanding leases and enable the lease manager. It then
// waits for the loss of leadership and disables the manager again.
func (s *Service) leaderLoop(ctx context.Context) {
	mgr := s.leases.Load()
	defer func() {
		s.ready.Store(false)
		mgr.Disable()
	}()
	wait := func() bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
			return true
		}
	}
	for {
		if err := s.node.Barrier(10 * time.Second); err != nil {
			s.log.Warn("barrier on new leadership", "error", err)
			if !wait() {
				return
			}
			continue
		}
		if err := s.recordSelf(ctx); err != nil {
			s.log.Warn("record member address", "error", err)
			if !wait() {
				return
			}
			continue
		}
		if err := mgr.Enable(ctx); err != nil {
			s.log.Warn("enable lease manager", "error", err)
			if !wait() {
				return
			}
			continue
		}
		break
	}
	s.ready.Store(true)
	s.log.Info("leadership established", "term", s.node.Term())
	<-ctx.Done()
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
