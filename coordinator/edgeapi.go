// SPDX-License-Identifier: Apache-2.0

package coordinator

import (
	"context"
	"time"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/coordinator/lessor"
	"github.com/seed96588659/muster/pkg/api"
)

// The edge's calls follow the rules of package edgecalls, which the simulator runs too; a member
// adds only what it alone knows: its API address, the region's queue and the table of edges.

// Register records nodes an edge found in provisioning mode (edgecalls.Calls.Register).
func (s *Service) Register(ctx context.Context, req api.RegisterRequest) (api.RegisterResponse, error) {
	return s.calls.Register(ctx, req)
}

// Acquire grants a lease on waiting nodes of a region, applying the reports it carries first
// (edgecalls.Calls.Acquire).
func (s *Service) Acquire(ctx context.Context, req api.AcquireRequest) (api.AcquireResponse, error) {
	resp, err := s.calls.Acquire(ctx, req)
	resp.Leader = s.cfg.APIAddress
	if err != nil {
		return resp, err
	}
	resp.Queue = s.regionQueue(req.Region)
	return resp, nil
}

// regionQueue is the region's waiting and leased counts for an edge's gauges, read from the
// ledger's per-region state counts after the grant (its nodes count as leased). A failed read
// leaves the queue out: the edge then keeps its gauges, and the answer still carries the lease.
func (s *Service) regionQueue(region string) *api.RegionQueue {
	c, err := s.ledger.RegionCounts(region)
	if err != nil {
		s.log.Warn("read the region's counts for an edge answer", "region", region, "error", err)
		return nil
	}
	return &api.RegionQueue{Waiting: c[api.StateWaiting], Leased: c[api.StateLeased]}
}

// Renew extends a lease by the configured TTL from now (edgecalls.Calls.Renew).
func (s *Service) Renew(ctx context.Context, req api.RenewRequest) (api.RenewResponse, error) {
	return s.calls.Renew(ctx, req)
}

// Report applies results under a lease (edgecalls.Calls.Report).
func (s *Service) Report(ctx context.Context, req api.ReportRequest) (api.ReportResponse, error) {
	return s.calls.Report(ctx, req)
}

// Heartbeat records that an edge is alive and tells it whether provisioning is paused
// (edgecalls.Calls.Heartbeat).
func (s *Service) Heartbeat(ctx context.Context, req api.HeartbeatRequest) (api.HeartbeatResponse, error) {
	resp, err := s.calls.Heartbeat(ctx, req)
	resp.Leader = s.cfg.APIAddress
	if err != nil {
		return resp, err
	}
	resp.Queue = s.regionQueue(req.Region)
	// A name the full table refuses still gets its answer: a real edge needs the pause flag.
	s.edges.record(req.Edge, EdgeSeen{Region: req.Region, At: resp.Time, Leases: len(req.Leases)})
	return resp, nil
}

// Edges returns the last heartbeat of every edge this member heard from while leading, recently
// enough to remember it (Config.MaxEdges, Config.EdgeExpiry).
func (s *Service) Edges() map[string]EdgeSeen { return s.edges.snapshot() }

// edgeMember is the member as the edge calls' rules use it (edgecalls.Member).
type edgeMember struct{ s *Service }

func (m edgeMember) LeaderOnly() error         { return m.s.leaderOnly() }
func (m edgeMember) Stamp() (time.Time, error) { return m.s.stamp() }
func (m edgeMember) Propose(ctx context.Context, cmd ledger.Command) (any, error) {
	return m.s.propose(ctx, cmd)
}
func (m edgeMember) ConfirmLeadership(ctx context.Context, what string) error {
	return m.s.confirmLeadership(ctx, what)
}
func (m edgeMember) LeaseErr(err error) error { return m.s.mapLeaseErr(err) }
func (m edgeMember) Ledger() *ledger.Ledger   { return m.s.ledger }
func (m edgeMember) Leases() *lessor.Manager  { return m.s.leases.Load() }
