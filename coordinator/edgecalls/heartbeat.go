// SPDX-License-Identifier: Apache-2.0

package edgecalls

import (
	"context"
	"fmt"

	"github.com/seed96588659/muster/pkg/api"
)

// Heartbeat tells an edge whether provisioning is paused and the leader's ledger time. It is
// answered by the leader only, after a quorum confirmed it still leads: a follower would have to
// call itself paused, and a deposed leader must never say "not paused". The caller adds what
// only it knows (the leader's address, the region's queue) and records the edge.
func (c *Calls) Heartbeat(ctx context.Context, req api.HeartbeatRequest) (api.HeartbeatResponse, error) {
	var resp api.HeartbeatResponse
	if err := c.m.LeaderOnly(); err != nil {
		return resp, err
	}
	now, err := c.m.Stamp()
	if err != nil {
		return resp, err
	}
	resp.Time = now
	if err := c.m.ConfirmLeadership(ctx, "heartbeat of "+req.Edge); err != nil {
		return resp, err
	}
	p, err := c.m.Ledger().Pause()
	if err != nil {
		return resp, fmt.Errorf("heartbeat of %s: read pause flag: %w", req.Edge, err)
	}
	resp.Paused, resp.PauseAsOf, resp.PauseEpoch = p.Paused, p.AsOf, p.Epoch
	return resp, nil
}
