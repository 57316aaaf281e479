// SPDX-License-Identifier: Apache-2.0

package coordinator

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/seed96588659/muster/coordinator/edgecalls"
	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/pkg/api"
)

// retryChunk is how many nodes one retry command carries, for the reason
// edgecalls.RegisterChunk gives.
const retryChunk = edgecalls.RegisterChunk

// Retry gives nodes another chance on the operator's word: the named ones, or up to req.Limit
// nodes of req.Region in req.State, go back to waiting with their attempts reset. The leader
// checks the selection before proposing anything (a named node that is unknown, leased or not in
// a retryable state refuses the whole request), then proposes it in commands of retryChunk nodes;
// a node that changed in between is skipped and named in the answer. With DryRun it only reads.
func (s *Service) Retry(ctx context.Context, req api.RetryRequest) (api.RetryResponse, error) {
	resp := api.RetryResponse{DryRun: req.DryRun, Nodes: []api.RetriedNode{}}
	if err := req.Validate(); err != nil {
		return resp, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	if err := s.leaderOnly(); err != nil {
		return resp, err
	}
	// A dry run too: it would list nodes that the real run cannot move.
	if err := s.checkProtocolForRetry(); err != nil {
		return resp, err
	}
	// A request sent again (its answer lost): what it moved is answered as moved, and only the
	// rest is planned, so a named node it moved is not refused as waiting.
	prev, err := s.retriedBy(req)
	if err != nil {
		return resp, err
	}
	done := make(map[string]bool, len(prev))
	for _, n := range prev {
		done[n.Identity] = true
	}
	sel := ledger.RetrySelection{Nodes: req.Nodes, Region: req.Region, State: req.State, Limit: req.Limit}
	if len(sel.Nodes) > 0 && len(done) > 0 {
		sel.Nodes = slices.DeleteFunc(slices.Clone(sel.Nodes), func(id string) bool { return done[id] })
	}
	for _, n := range prev {
		if len(req.Nodes) == 0 || slices.Contains(req.Nodes, n.Identity) {
			resp.Nodes = append(resp.Nodes, toAPIRetried(n))
		}
	}
	if len(req.Nodes) > 0 && len(sel.Nodes) == 0 {
		return resp, nil
	}
	plan, err := s.ledger.PlanRetry(sel)
	if err != nil {
		return resp, fmt.Errorf("retry: %w", err)
	}
	// A region's node this request moved and that failed back into the state since is not
	// moved twice by the same request.
	plan.Nodes = slices.DeleteFunc(plan.Nodes, func(n ledger.RetriedNode) bool { return done[n.Identity] })
	resp.More = plan.More
	if req.DryRun {
		for _, n := range plan.Nodes {
			resp.Nodes = append(resp.Nodes, toAPIRetried(n))
		}
		return resp, nil
	}
	lcfg := s.leases.Load().Config()
	for start := 0; start < len(plan.Nodes); start += retryChunk {
		chunk := plan.Nodes[start:min(start+retryChunk, len(plan.Nodes))]
		now, err := s.stamp()
		if err != nil {
			return resp, fmt.Errorf("retry %d nodes (after %d retried): %w", len(chunk), len(resp.Nodes), err)
		}
		cmd := &ledger.Retry{Now: now, By: cmp.Or(req.By, "operator"), Policy: lcfg.Policy, Region: req.Region, State: req.State, Nodes: make([]string, len(chunk)),
			RequestID: req.RequestID, Keep: lcfg.ReportMemory}
		for i, n := range chunk {
			cmd.Nodes[i] = n.Identity
		}
		res, err := s.propose(ctx, cmd)
		if err != nil {
			// The chunks before this one are applied: say so, the operator may run it again.
			return resp, fmt.Errorf("retry %d nodes (after %d retried): %w", len(chunk), len(resp.Nodes), err)
		}
		r := res.(*ledger.RetryResult)
		for _, n := range r.Retried {
			resp.Nodes = append(resp.Nodes, toAPIRetried(n))
		}
		for _, rej := range r.Rejected {
			resp.Skipped = append(resp.Skipped, api.SkippedNode{Identity: rej.Identity, Reason: rej.Reason})
		}
		s.metrics.RetriedNodes.Add(float64(len(r.Retried)))
	}
	return resp, nil
}

// retriedBy is what req's request id moved before; nothing without an id or on a dry run.
func (s *Service) retriedBy(req api.RetryRequest) ([]ledger.RetriedNode, error) {
	if req.RequestID == "" || req.DryRun {
		return nil, nil
	}
	prev, err := s.ledger.RetriedBy(req.RequestID)
	if err != nil {
		return nil, fmt.Errorf("retry %s: read what it moved before: %w", req.RequestID, err)
	}
	return prev, nil
}

func toAPIRetried(n ledger.RetriedNode) api.RetriedNode {
	return api.RetriedNode{Identity: n.Identity, Region: n.Region, From: n.From, Attempts: n.Attempts, LastError: n.LastError}
}

// Failures returns up to limit recent failures from this member's ledger, newest first. It reads
// the ledger's failure index, not the nodes, so its cost is the same at any ledger size.
func (s *Service) Failures(ctx context.Context, limit int) (api.FailuresResponse, error) {
	fs, err := s.ledger.Failures(limit)
	if err != nil {
		return api.FailuresResponse{}, fmt.Errorf("recent failures: %w", err)
	}
	resp := api.FailuresResponse{Failures: make([]api.Failure, len(fs))}
	for i, f := range fs {
		resp.Failures[i] = api.Failure{At: f.At, Identity: f.Identity, Region: f.Region, Edge: f.Edge, LeaseID: f.LeaseID,
			State: f.State, Attempts: f.Attempts, Reason: f.Reason, Error: f.Error}
	}
	return resp, nil
}
