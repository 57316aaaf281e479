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
// answer and the others are acted on. Below the cluster protocol that applies operator commands
// it refuses the whole request (409): an older member would halt at the command.
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
	policy := s.leases.Load().Config().Policy
	for start := 0; start < len(req.Nodes); start += retryChunk {
		chunk := req.Nodes[start:min(start+retryChunk, len(req.Nodes))]
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
