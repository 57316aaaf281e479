// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"maps"
	"slices"
	"time"

	"github.com/seed96588659/muster/coordinator/ledger"
)

// operatorFault is the operator acting on one node: ban, unban, forget or (with two regions)
// move it, or approve a held one. The ledger refuses a node a lease holds or fences; the checker
// sees that no banned or held node is granted and the overlap invariant that no refusal was
// missed.
func operatorFault() fault {
	return fault{name: "operator", every: 2 * time.Minute, inject: func(s *Sim) {
		// Only a seed whose queue holds a node draws more (the others run as before it existed).
		if held := s.check.heldSet(); len(held) > 0 && s.chance(0.4) {
			ids := slices.Sorted(maps.Keys(held))
			s.op.act(operatorRequest{verb: ledger.VerbApprove, node: pick(s, ids)})
			return
		}
		n := pick(s, s.nodes)
		verbs := []string{ledger.VerbBan, ledger.VerbUnban, ledger.VerbForget}
		if len(s.regions) > 1 {
			verbs = append(verbs, ledger.VerbMove)
		}
		req := operatorRequest{verb: pick(s, verbs), node: n.id}
		if req.verb == ledger.VerbMove {
			req.region = pick(s, s.regions)
		}
		s.op.act(req)
	}}
}

// operatorRequest is one operator verb on one node (move takes it to region), or with all an
// approve of every node held in region.
type operatorRequest struct {
	verb, node, region string
	all                bool
}

func (o *operator) act(req operatorRequest) {
	s := o.s
	s.tracef([]string{req.node}, "op", "asks to %s %s %s (all %t)", req.verb, req.node, req.region, req.all)
	if req.node != "" {
		s.check.operated[req.node] = true
	}
	o.c.start(kindOperator, req, 5*time.Second, 0, 3*len(s.members)+2, func(resp any, _ logPos, err error) {
		s.tracef([]string{req.node}, "op", "%s %s answered: %v %v", req.verb, req.node, resp, err)
	})
}
