// SPDX-License-Identifier: Apache-2.0

package edgecalls

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/coordinator/lessor"
	"github.com/seed96588659/muster/pkg/api"
)

// Member is what only a member of the cluster can do for an edge's call.
type Member interface {
	// LeaderOnly refuses a write on a member that does not lead or is not ready to, saying why.
	LeaderOnly() error
	// Stamp is this leadership's ledger time for a command proposed now.
	Stamp() (time.Time, error)
	// Propose commits cmd through the log and returns what applying it answered.
	Propose(ctx context.Context, cmd ledger.Command) (any, error)
	// ConfirmLeadership checks with a quorum that this member still leads, so what it then reads
	// from its own ledger is current; what names the call in the error.
	ConfirmLeadership(ctx context.Context, what string) error
	// LeaseErr is what a client can act on for an error of the lease manager (its "disabled"
	// becomes not leader or not ready).
	LeaseErr(err error) error
	// Ledger is the member's ledger.
	Ledger() *ledger.Ledger
	// Leases is the lease manager of this leadership.
	Leases() *lessor.Manager
}

// Options are a member's settings of the edges' calls.
type Options struct {
	// Errors codes a carried report's refusal as the member's HTTP layer would code it alone.
	Errors []api.ErrorMapping
	// MaxFirstSeen caps a region's first-seen nodes (capFirstSeen); 0: no cap.
	MaxFirstSeen int
	// FirstSeenRefused counts the new identities the cap refused; nil counts nothing.
	FirstSeenRefused func(n int)
	// Logger logs the cap's refusals, once a minute; nil logs nothing.
	Logger *slog.Logger
	// Approval is the hold policy the leader stamps into each registration (approval.*); nil
	// holds nothing.
	Approval *ledger.Approval
	// Monotonic is the member's monotonic clock.
	Monotonic func() time.Duration
}

// Calls answers an edge's calls on one member.
type Calls struct {
	m Member
	o Options
	// registerMu serializes the leader's registers that name new identities, so the per-region
	// cap of first-seen nodes is exact.
	registerMu sync.Mutex
	firstSeen  refusalLog
}

// New returns the calls of member m.
func New(m Member, o Options) *Calls {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Monotonic == nil {
		start := time.Now()
		o.Monotonic = func() time.Duration { return time.Since(start) }
	}
	return &Calls{m: m, o: o}
}
