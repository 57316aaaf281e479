// SPDX-License-Identifier: Apache-2.0

package edgecalls

import (
	"context"
	"fmt"

	"github.com/seed96588659/muster/coordinator/lessor"
	"github.com/seed96588659/muster/pkg/api"
)

// Renew extends a lease by the configured TTL from now and tells the edge the pause flag.
func (c *Calls) Renew(ctx context.Context, req api.RenewRequest) (api.RenewResponse, error) {
	var resp api.RenewResponse
	if err := c.m.LeaderOnly(); err != nil {
		return resp, err
	}
	ls, err := c.m.Leases().Renew(ctx, lessor.Ref{ID: req.LeaseID, Token: req.Token, Edge: req.Edge, Region: req.Region})
	if err != nil {
		return resp, c.m.LeaseErr(err)
	}
	resp.Lease = *APILease(ls)
	p, err := c.m.Ledger().Pause()
	if err != nil {
		return resp, fmt.Errorf("renew lease %s: read pause flag: %w", req.LeaseID, err)
	}
	resp.Paused, resp.PauseAsOf, resp.PauseEpoch = p.Paused, p.AsOf, p.Epoch
	return resp, nil
}
