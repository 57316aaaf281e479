// SPDX-License-Identifier: Apache-2.0

package coordinator

import (
	"context"
	"fmt"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/pkg/api"
)

// Operate applies an operator verb to named nodes through the log, in commands of retryChunk
// nodes; each node the ledger refuses (leased, fenced, unknown, nothing to change) is named in the
// answer and the others are acted on. An approve of All selects every node held in the region
// first (heldNodes), and the ledger approves each only while it is still held there. Below the
// cluster protocol that applies the verb it refuses the whole request (409): an older member
// would halt at the command or refuse it.
func (s *Service) Operate(ctx context.Context, req api.OperatorRequest) (api.OperatorResponse, error) {
	resp := api.OperatorResponse{Done: []string{}}
	if err := req.Validate(); err != nil {
		return resp, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	if req.By == "" {
		// The HTTP layer names the admin it authenticated; a verb must name someone.
		return resp, fmt.Errorf("%w: by: the admin who asks is not named", ErrBadRequest)
	}
	if err := s.leaderOnly(); err != nil {
		return resp, err
	}
	if err := s.ledger.CheckOperator(req.Verb); err != nil {
		return resp, fmt.Errorf("member %s: %w", s.cfg.ID, err)
	}
	nodes := req.Nodes
	if req.All {
		var err error
		if nodes, err = s.heldNodes(ctx, req.Region); err != nil {
			return resp, err
		}
	}
	policy := s.leases.Load().Config().Policy
	for start := 0; start < len(nodes); start += retryChunk {
		chunk := nodes[start:min(start+retryChunk, len(nodes))]
		now, err := s.stamp()
		if err != nil {
			return resp, fmt.Errorf("%s %d nodes (after %d done): %w", req.Verb, len(chunk), len(resp.Done), err)
		}
		res, err := s.propose(ctx, &ledger.Operator{Now: now, By: req.By, Verb: req.Verb, Nodes: chunk, Region: req.Region, Reason: req.Reason, Policy: policy})
		if err != nil {
			return resp, fmt.Errorf("%s %d nodes (after %d done): %w", req.Verb, len(chunk), len(resp.Done), err)
		}
		r := res.(*ledger.OperatorResult)
		resp.Done = append(resp.Done, r.Done...)
		s.metrics.OperatorNodes.WithLabelValues(req.Verb).Add(float64(len(r.Done)))
		for _, rej := range r.Rejected {
			resp.Rejected = append(resp.Rejected, api.RejectedResult{Identity: rej.Identity, Reason: rej.Reason})
		}
	}
	return resp, nil
}

// heldNodes lists the nodes held in region, read on the leader once a quorum confirms it leads:
// a region the ledger has no node in is refused as unknown (most likely a typo).
func (s *Service) heldNodes(ctx context.Context, region string) ([]string, error) {
	if err := s.confirmLeadership(ctx, "approve --all"); err != nil {
		return nil, err
	}
	counts, err := s.ledger.Counts()
	if err != nil {
		return nil, fmt.Errorf("approve --all in %s: %w", region, err)
	}
	if _, ok := counts[region]; !ok {
		return nil, fmt.Errorf("approve --all: %w: no node of the ledger is in region %q", ledger.ErrUnknownRegion, region)
	}
	var ids []string
	f := ledger.NodeFilter{Region: region, State: api.StateHeld, Limit: ledger.MaxBatch}
	for counts[region][api.StateHeld] > 0 {
		page, next, err := s.ledger.Nodes(f)
		if err != nil {
			return nil, fmt.Errorf("approve --all in %s: %w", region, err)
		}
		for _, n := range page {
			ids = append(ids, n.Identity)
		}
		if next == "" {
			break
		}
		f.After = next
	}
	return ids, nil
}
