// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/pkg/api"
)

// approvals is the seed's held queue: the approval policy each member stamps while it leads, the
// twins (nodes a second machine answers for, whose hosts end in a duplicate responder) and an
// approver who empties the queue now and then. Its draws come from a generator of their own, so
// a seed that holds nothing runs exactly as it did before the queue existed.
type approvals struct {
	rng *rand.Rand
	// policies are the members' approval.* keys, by member number (nil: off); they may differ,
	// as during a rolling change of the configuration: the leader's is the one applied.
	policies []*ledger.Approval
	twins    map[string]bool
	// dupShare is the share of a twin's hosts that end in a duplicate responder.
	dupShare float64
}

// dupPhrase names a second responder in a result's error, with or without the wire prefix.
const dupPhrase = "a second responder answered"

// buildApprovals draws the seed's queue: policies on 40% of the seeds, a twin on 30% (every seed
// with Options.Policies or DupAsFailure).
func (s *Sim) buildApprovals() {
	a := &approvals{rng: rand.New(rand.NewPCG(s.opts.Seed, s.opts.Seed^0x5eed0fa99e0fa1)), twins: map[string]bool{}}
	s.appr = a
	if a.rng.Float64() < 0.4 || s.opts.Policies {
		p := &ledger.Approval{}
		switch a.rng.IntN(3) {
		case 0:
			p.Manual = []string{s.regions[a.rng.IntN(len(s.regions))]}
		case 1:
			p.Manual = []string{ledger.AnyRegion}
		}
		p.ReprovisionHold = a.rng.Float64() < 0.5
		if a.rng.Float64() < 0.5 {
			p.FlapCount, p.FlapWindow = 2+a.rng.IntN(2), time.Duration(2+a.rng.IntN(4))*time.Minute
		}
		for i := range 3 {
			// The others' keys differ on some seeds: only the leader's may apply.
			if i == 0 || a.rng.Float64() < 0.6 {
				a.policies = append(a.policies, p)
			} else {
				a.policies = append(a.policies, nil)
			}
		}
	}
	if a.rng.Float64() < 0.3 || s.opts.DupAsFailure || s.opts.Policies {
		a.twins[s.nodes[a.rng.IntN(len(s.nodes))].id] = true
		a.dupShare = 0.5 + a.rng.Float64()/2
	}
	if a.policies != nil || len(a.twins) > 0 {
		for i, p := range a.policies {
			s.tracef(nil, "sim", "m%d's approval policy: %+v", i, p)
		}
		s.tracef(nil, "sim", "twins %v", slices.Sorted(maps.Keys(a.twins)))
		s.after(time.Duration(30+a.rng.IntN(60))*time.Second, s.approveNext)
	}
}

// policy is member i's approval policy.
func (a *approvals) policy(i int) *ledger.Approval {
	if i < len(a.policies) {
		return a.policies[i]
	}
	return nil
}

// duplicate is the result of a host of a twin that saw the second machine: a failed result whose
// error starts with the wire prefix, or, with Options.DupAsFailure, a plain failure as the
// builds before the queue sent it.
func (s *Sim) duplicate(node string) (string, bool) {
	a := s.appr
	if !a.twins[node] || a.rng.Float64() >= a.dupShare {
		return "", false
	}
	why := fmt.Sprintf("%s gencsr for %s; nothing it returned is used", dupPhrase, node)
	if s.opts.DupAsFailure {
		return why, true
	}
	return api.DuplicateResponderPrefix + " " + why, true
}

// approveNext is the operator working through the queue: one held node, or now and then every
// held node of a region, until the quiet end.
func (s *Sim) approveNext() {
	a := s.appr
	if s.now >= s.end {
		return
	}
	if held := slices.Sorted(maps.Keys(s.check.heldSet())); len(held) > 0 {
		id := held[a.rng.IntN(len(held))]
		req := operatorRequest{verb: ledger.VerbApprove, node: id}
		if a.rng.Float64() < 0.25 {
			req = operatorRequest{verb: ledger.VerbApprove, region: s.node(id).region, all: true}
		}
		s.op.act(req)
	}
	s.after(time.Duration(20+a.rng.IntN(60))*time.Second, s.approveNext)
}

// approveAll is the service's approve --all: the nodes held in region, read on the leader once
// it confirmed it leads.
func (m *member) approveAll(region string) ([]string, error) {
	if !m.confirm() {
		return nil, errNotLeader
	}
	var ids []string
	f := ledger.NodeFilter{Region: region, State: api.StateHeld, Limit: ledger.MaxBatch}
	for {
		page, next, err := m.ledger.Nodes(f)
		if err != nil {
			return nil, err
		}
		for _, n := range page {
			ids = append(ids, n.Identity)
		}
		if next == "" {
			return ids, nil
		}
		f.After = next
	}
}
