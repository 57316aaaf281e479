// SPDX-License-Identifier: Apache-2.0

package httpapi

import (
	"context"

	"github.com/seed96588659/muster/pkg/api"
)

// Service is what the HTTP layer needs from a coordinator member; the core's Service satisfies it.
type Service interface {
	Register(ctx context.Context, req api.RegisterRequest) (api.RegisterResponse, error)
	Acquire(ctx context.Context, req api.AcquireRequest) (api.AcquireResponse, error)
	Renew(ctx context.Context, req api.RenewRequest) (api.RenewResponse, error)
	Report(ctx context.Context, req api.ReportRequest) (api.ReportResponse, error)
	Heartbeat(ctx context.Context, req api.HeartbeatRequest) (api.HeartbeatResponse, error)
	Pause(ctx context.Context, req api.PauseRequest) (api.PauseResponse, error)
	Resume(ctx context.Context) (api.PauseResponse, error)
	Status(ctx context.Context) (api.StatusResponse, error)
	Nodes(ctx context.Context, f api.NodeFilter) (api.NodesResponse, error)
	Node(ctx context.Context, identity string) (api.Node, error)
	Join(ctx context.Context, req api.JoinRequest) (api.JoinResponse, error)
	Remove(ctx context.Context, req api.RemoveRequest) error
	Snapshot(ctx context.Context) (api.SnapshotResponse, error)
	Retry(ctx context.Context, req api.RetryRequest) (api.RetryResponse, error)
	Operate(ctx context.Context, req api.OperatorRequest) (api.OperatorResponse, error)
	Events(ctx context.Context, from api.EventPosition, filter api.EventFilter, follow bool, send func(api.Event) error) error
	Failures(ctx context.Context, limit int) (api.FailuresResponse, error)
	IsLeader() bool
	LeaderAPIAddress() string
	// Staleness describes this member's own copy of the ledger, for a read served without the leader.
	Staleness() api.Staleness
	// Fingerprint is this member's ledger digest (hex) at the index it has applied.
	Fingerprint() (applied uint64, digest string, err error)
}
