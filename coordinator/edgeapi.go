// SPDX-License-Identifier: Apache-2.0

package coordinator

import (
	"context"
	"fmt"

	"github.com/seed96588659/muster/coordinator/httpapi"
	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/coordinator/lessor"
	"github.com/seed96588659/muster/pkg/api"
)

// registerChunk is how many nodes one register command carries. A command is decoded whole on
// every member, so smaller commands keep the heap of a bulk load small (about a quarter of what
// ledger.MaxBatch-sized ones need) at the same load time.
const registerChunk = 1000

// Register records nodes an edge found in provisioning mode; repeating it is harmless. Each node
// the API or the ledger refuses (an identity it does not take, a node of another region) is named
// in the answer's Rejected and the others are recorded, so one bad node never blocks a region's
// discovery. New identities beyond the region's cap of first-seen nodes are refused by name too
// (capFirstSeen). Large requests are split into ledger batches.
func (s *Service) Register(ctx context.Context, req api.RegisterRequest) (api.RegisterResponse, error) {
	var resp api.RegisterResponse
	if err := s.leaderOnly(); err != nil {
		return resp, err
	}
	nodes, rejected := req.SplitNodes()
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		ids[i] = n.Identity
	}
	refused, err := s.ledger.RegisterRefusals(req.Region, ids)
	if err != nil {
		return resp, fmt.Errorf("register %d nodes of %s in %s: %w", len(ids), req.Edge, req.Region, err)
	}
	if len(refused) > 0 {
		kept := nodes[:0]
		for _, n := range nodes {
			if err := refused[n.Identity]; err != nil {
				rejected = append(rejected, api.RejectedResult{Identity: n.Identity, Reason: err.Error()})
				continue
			}
			kept = append(kept, n)
		}
		nodes = kept
	}
	nodes, rejected, unlock, err := s.capFirstSeen(req.Region, nodes, rejected)
	if err != nil {
		return resp, fmt.Errorf("register %d nodes of %s in %s: %w", len(ids), req.Edge, req.Region, err)
	}
	defer unlock()
	policy := s.leases.Load().Config().Policy
	for start := 0; start < len(nodes); start += registerChunk {
		chunk := nodes[start:min(start+registerChunk, len(nodes))]
		now, err := s.stamp()
		if err != nil {
			return resp, fmt.Errorf("register %d nodes of %s in %s: %w", len(chunk), req.Edge, req.Region, err)
		}
		cmd := &ledger.Register{Now: now, Edge: req.Edge, Policy: policy, Nodes: make([]ledger.RegisterNode, len(chunk))}
		for i, n := range chunk {
			cmd.Nodes[i] = ledger.RegisterNode{Identity: n.Identity, Region: req.Region, InventoryVersion: n.Version, Facts: n.Facts}
		}
		res, err := s.propose(ctx, cmd)
		if err != nil {
			return resp, fmt.Errorf("register %d nodes of %s in %s: %w", len(chunk), req.Edge, req.Region, err)
		}
		r := res.(*ledger.RegisterResult)
		resp.Added += r.Added
		resp.Requeued += r.Requeued
		resp.Unchanged += r.Unchanged
		resp.Final = append(resp.Final, r.Final...)
		for _, rej := range r.Rejected {
			rejected = append(rejected, api.RejectedResult{Identity: rej.Identity, Reason: rej.Reason})
		}
	}
	resp.Rejected, resp.ListsFinal = rejected, true
	return resp, nil
}

// Acquire grants a lease on up to req.MaxNodes waiting nodes of req.Region, waiting up to req.Wait
// (long poll). An empty response means nothing became eligible in time, or Paused. The reports
// it carries are applied first, each as Report would apply it, and answered in order.
func (s *Service) Acquire(ctx context.Context, req api.AcquireRequest) (api.AcquireResponse, error) {
	resp := api.AcquireResponse{Leader: s.cfg.APIAddress, CarriesReports: true}
	if err := s.leaderOnly(); err != nil {
		return resp, err
	}
	reports := make([]api.ReportAnswer, len(req.Reports))
	var carried []lessor.Carried
	var carriedAt []int // the index in reports of each carried report
	for i, rep := range req.Reports {
		reports[i].RequestID = rep.RequestID
		results, rejected, err := s.recordable(rep)
		if err != nil {
			return resp, err
		}
		reports[i].Applied, reports[i].Rejected = []string{}, rejected
		if len(results) == 0 {
			continue
		}
		carried = append(carried, lessor.Carried{Ref: lessor.Ref{ID: rep.LeaseID, Token: rep.Token, Edge: rep.Edge, Region: rep.Region}, RequestID: rep.RequestID, Results: results})
		carriedAt = append(carriedAt, i)
	}
	a, err := s.leases.Load().Acquire(ctx, lessor.Request{
		Edge: req.Edge, Region: req.Region, RequestID: req.RequestID, MaxNodes: req.MaxNodes, Wait: req.Wait.Std(), Reports: carried,
	})
	if err != nil {
		return resp, s.mapLeaseErr(err)
	}
	for j, ans := range a.Reports {
		rep := &reports[carriedAt[j]]
		if ans.Err != nil {
			_, code := httpapi.Classify(HTTPErrors(), ans.Err)
			rep.Error = &api.ErrorBody{Error: ans.Err.Error(), Code: code}
			continue
		}
		rep.Applied = append(rep.Applied, ans.Result.Applied...)
		for _, r := range ans.Result.Rejected {
			rep.Rejected = append(rep.Rejected, api.RejectedResult{Identity: r.Identity, Reason: r.Reason})
		}
	}
	if a.Lease == nil && !a.Paused {
		// A grant was confirmed by its commit; "nothing, and not paused" comes from this
		// member's ledger, which a deposed leader must not vouch for.
		if err := s.confirmLeadership(ctx, "acquire for "+req.Edge); err != nil {
			return resp, err
		}
	}
	resp.Lease, resp.Paused, resp.PauseAsOf, resp.Held = APILease(a.Lease), a.Paused, a.PauseAsOf, api.Duration(a.Held)
	if len(reports) > 0 {
		resp.Reports = reports
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

// Renew extends a lease by the configured TTL from now.
func (s *Service) Renew(ctx context.Context, req api.RenewRequest) (api.RenewResponse, error) {
	var resp api.RenewResponse
	if err := s.leaderOnly(); err != nil {
		return resp, err
	}
	ls, err := s.leases.Load().Renew(ctx, lessor.Ref{ID: req.LeaseID, Token: req.Token, Edge: req.Edge, Region: req.Region})
	if err != nil {
		return resp, s.mapLeaseErr(err)
	}
	resp.Lease = *APILease(ls)
	p, err := s.ledger.Pause()
	if err != nil {
		return resp, fmt.Errorf("renew lease %s: read pause flag: %w", req.LeaseID, err)
	}
	resp.Paused, resp.PauseAsOf = p.Paused, p.AsOf
	return resp, nil
}

// Report applies results under a lease. A lease that is unknown or a token that does not match
// fails the whole request; single results the ledger refuses (node not held by this lease) are
// listed in Rejected, and both are counted as stale reports. Results whose outcome the cluster
// protocol cannot record yet are listed in Rejected too, not counted as stale.
func (s *Service) Report(ctx context.Context, req api.ReportRequest) (api.ReportResponse, error) {
	resp := api.ReportResponse{Applied: []string{}}
	if err := s.leaderOnly(); err != nil {
		return resp, err
	}
	results, rejected, err := s.recordable(req)
	if err != nil {
		return resp, err
	}
	resp.Rejected = rejected
	if len(results) == 0 {
		return resp, nil
	}
	rr, err := s.leases.Load().Report(ctx, lessor.Ref{ID: req.LeaseID, Token: req.Token, Edge: req.Edge, Region: req.Region}, req.RequestID, results)
	if err != nil {
		return resp, s.mapLeaseErr(err)
	}
	resp.Applied = append(resp.Applied, rr.Applied...)
	for _, r := range rr.Rejected {
		resp.Rejected = append(resp.Rejected, api.RejectedResult{Identity: r.Identity, Reason: r.Reason})
	}
	return resp, nil
}

// recordable is what of report req goes to the ledger, and the results refused by name before:
// those the API does not take, and outcomes the cluster protocol cannot record on every member
// yet (in the log they would fail the whole report).
func (s *Service) recordable(req api.ReportRequest) ([]ledger.Result, []api.RejectedResult, error) {
	valid, rejected := req.SplitResults()
	if len(valid) == 0 {
		return nil, rejected, nil
	}
	results, held, err := s.ledger.Recordable(LedgerResults(valid))
	if err != nil {
		return nil, nil, fmt.Errorf("report of lease %s: read cluster protocol: %w", req.LeaseID, err)
	}
	for _, r := range held {
		rejected = append(rejected, api.RejectedResult{Identity: r.Identity, Reason: r.Reason})
	}
	return results, rejected, nil
}

// Heartbeat records that an edge is alive and tells it whether provisioning is paused. It is
// answered by the leader only, after a quorum confirmed it still leads: a follower would have to
// call itself paused, and a deposed leader must never say "not paused".
func (s *Service) Heartbeat(ctx context.Context, req api.HeartbeatRequest) (api.HeartbeatResponse, error) {
	resp := api.HeartbeatResponse{Leader: s.cfg.APIAddress}
	if err := s.leaderOnly(); err != nil {
		return resp, err
	}
	now, err := s.stamp()
	if err != nil {
		return resp, err
	}
	resp.Time = now
	if err := s.confirmLeadership(ctx, "heartbeat of "+req.Edge); err != nil {
		return resp, err
	}
	p, err := s.ledger.Pause()
	if err != nil {
		return resp, fmt.Errorf("heartbeat of %s: read pause flag: %w", req.Edge, err)
	}
	resp.Paused, resp.PauseAsOf = p.Paused, p.AsOf
	resp.Queue = s.regionQueue(req.Region)
	// A name the full table refuses still gets its answer: a real edge needs the pause flag.
	s.edges.record(req.Edge, EdgeSeen{Region: req.Region, At: resp.Time, Leases: len(req.Leases)})
	return resp, nil
}

// Edges returns the last heartbeat of every edge this member heard from while leading, recently
// enough to remember it (Config.MaxEdges, Config.EdgeExpiry).
func (s *Service) Edges() map[string]EdgeSeen { return s.edges.snapshot() }
