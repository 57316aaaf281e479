// SPDX-License-Identifier: Apache-2.0

package lease

import (
	"context"
	"time"

	"github.com/seed96588659/muster/edge/register"
	"github.com/seed96588659/muster/pkg/api"
)

// Grant is the answer to an acquire or renew.
type Grant struct {
	// Lease is nil when nothing was granted (nothing waiting, or paused).
	Lease *api.Lease
	// Paused is the source's own pause flag (the coordinator's operator pause).
	Paused bool
	// PauseAt is where in the coordinator's log Paused holds (api.PauseMark); zero from a local
	// source or an older coordinator.
	PauseAt api.PauseMark
	// Held is how long the server held the request before answering (a long poll), measured by
	// the server; the edge counts the lease from its send time plus this.
	Held time.Duration
}

// Source leases nodes of one region to this edge; it is shaped like the coordinator's edge API.
type Source interface {
	// Register records nodes discovery found and says how many it queued anew; repeating it is
	// harmless.
	Register(ctx context.Context, found []register.Found) (int, error)
	// Acquire leases up to max waiting nodes, waiting up to wait for some.
	Acquire(ctx context.Context, max int, wait time.Duration) (Grant, error)
	// Renew extends a lease the edge still holds.
	Renew(ctx context.Context, l api.Lease) (Grant, error)
	// Report delivers results for nodes of a lease.
	Report(ctx context.Context, l api.Lease, results []api.NodeResult) (api.ReportResponse, error)
}
