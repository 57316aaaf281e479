// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"context"
	"time"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/coordinator/lessor"
)

// callee is one incarnation of a member as the edge calls' rules use it (edgecalls.Member): what
// coordinator.Service does over hashicorp/raft, done over the simulated Raft.
type callee struct {
	m   *member
	inc int
}

func (c callee) LeaderOnly() error         { return c.m.leaderOnly() }
func (c callee) Stamp() (time.Time, error) { return c.m.stamp() }
func (c callee) Propose(ctx context.Context, cmd ledger.Command) (any, error) {
	return c.m.proposeFor(ctx, c.inc, cmd)
}
func (c callee) LeaseErr(err error) error { return c.m.mapLeaseErr(err) }
func (c callee) Ledger() *ledger.Ledger   { return c.m.ledger }
func (c callee) Leases() *lessor.Manager  { return c.m.mgr }

// ConfirmLeadership is VerifyLeader: a quorum still follows this member in its term.
func (c callee) ConfirmLeadership(_ context.Context, what string) error {
	if !c.m.confirm() {
		return errNotLeader
	}
	return nil
}
