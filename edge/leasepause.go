// SPDX-License-Identifier: Apache-2.0

package edge

import (
	"time"

	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/rpc"
)

// leasePause is a host's pause source that also gives the transport its lease's deadline, so
// each request's Choria TTL ends with the lease and the node refuses it once it is older
// (rpc.DeadlineSource): the fence left when the edge was stopped between check and send.
type leasePause struct {
	rpc.PauseFunc
	held *lease.Held
}

var _ rpc.DeadlineSource = leasePause{}

// Deadline is when the edge stops counting the lease valid; false for one that never expires.
func (p leasePause) Deadline() (time.Time, bool) {
	d := p.held.Deadline()
	return d, !d.IsZero()
}
