// SPDX-License-Identifier: Apache-2.0

package edgecalls

import (
	"context"
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

// Calls answers an edge's calls on one member.
type Calls struct {
	m Member
	// errors codes a carried report's refusal as the member's HTTP layer would code it alone.
	errors []api.ErrorMapping
}

// New returns the calls of member m, whose errors travel as errors maps them.
func New(m Member, errors []api.ErrorMapping) *Calls {
	return &Calls{m: m, errors: errors}
}
