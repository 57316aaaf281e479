// SPDX-License-Identifier: Apache-2.0

package edgecalls

import (
	"context"
	"fmt"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/pkg/api"
)

// RegisterChunk is how many nodes one register command carries. A command is decoded whole on
// every member, so smaller commands keep the heap of a bulk load small (about a quarter of what
// ledger.MaxBatch-sized ones need) at the same load time.
const RegisterChunk = 1000

// Register records nodes an edge found in provisioning mode; repeating it is harmless. Each node
// the API or the ledger refuses (an identity it does not take, a node of another region) is named
// in the answer's Rejected and the others are recorded, so one bad node never blocks a region's
// discovery. New identities beyond the region's cap of first-seen nodes are refused by name too
// (capFirstSeen). Large requests are split into ledger batches.
func (c *Calls) Register(ctx context.Context, req api.RegisterRequest) (api.RegisterResponse, error) {
	var resp api.RegisterResponse
	if err := c.m.LeaderOnly(); err != nil {
		return resp, err
	}
	nodes, rejected := req.SplitNodes()
	nodes, rejected, err := c.refuseEarly(req, nodes, rejected)
	if err != nil {
		return resp, err
	}
	nodes, rejected, unlock, err := c.capFirstSeen(req.Region, nodes, rejected)
	if err != nil {
		return resp, fmt.Errorf("register %d nodes of %s in %s: %w", len(nodes), req.Edge, req.Region, err)
	}
	defer unlock()
	policy := c.m.Leases().Config().Policy
	for start := 0; start < len(nodes); start += RegisterChunk {
		chunk := nodes[start:min(start+RegisterChunk, len(nodes))]
		now, err := c.m.Stamp()
		if err != nil {
			return resp, fmt.Errorf("register %d nodes of %s in %s: %w", len(chunk), req.Edge, req.Region, err)
		}
		cmd := &ledger.Register{Now: now, Edge: req.Edge, Policy: policy, Approval: c.o.Approval, Nodes: make([]ledger.RegisterNode, len(chunk))}
		for i, n := range chunk {
			cmd.Nodes[i] = ledger.RegisterNode{Identity: n.Identity, Region: req.Region, InventoryVersion: n.Version, Facts: n.Facts}
		}
		res, err := c.m.Propose(ctx, cmd)
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

// refuseEarly takes out of nodes, by name, those the ledger would refuse (RegisterRefusals), so
// they cost no log entry.
func (c *Calls) refuseEarly(req api.RegisterRequest, nodes []api.RegisterNode, rejected []api.RejectedResult) ([]api.RegisterNode, []api.RejectedResult, error) {
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		ids[i] = n.Identity
	}
	refused, err := c.m.Ledger().RegisterRefusals(req.Region, ids)
	if err != nil {
		return nil, nil, fmt.Errorf("register %d nodes of %s in %s: %w", len(ids), req.Edge, req.Region, err)
	}
	if len(refused) == 0 {
		return nodes, rejected, nil
	}
	kept := nodes[:0]
	for _, n := range nodes {
		if err := refused[n.Identity]; err != nil {
			rejected = append(rejected, api.RejectedResult{Identity: n.Identity, Reason: err.Error()})
			continue
		}
		kept = append(kept, n)
	}
	return kept, rejected, nil
}
