// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"fmt"
	"slices"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// lateOutcome reports whether outcome r is a fact about the node that outlives its lease: an edge
// that provisioned (or shut down) a node inside its own window may report it after the leader
// expired the lease, and fencing must not discard the record of what was done.
func lateOutcome(o api.Outcome) bool {
	return o == api.OutcomeProvisioned || o == api.OutcomeShutdown
}

// lateGrant finds the node's grant under lease id and token to edge in its history and
// returns it. It refuses when no such grant is in the history (a forged or forgotten lease), when
// that lease recorded a result for the node since the grant (any transition of that lease id and
// token other than its expiry: a retry of the same result, or a second answer contradicting the
// first, which moved the node on and may have let another lease take it), or when a later lease
// provisioned or shut the node down since. So only a lease that let go of the node by its expiry,
// having reported nothing of it, may record a late fact. Below cluster protocol lateRuleProtocol
// (proto is the ledger's) it refuses, as the build before did, only a provisioned or shutdown of
// that lease since the grant: every member then applies the same rule. From lateMoveProtocol the
// report's region is compared with the node's at the grant, before the operator moved it.
func lateGrant(n *Node, id string, token uint64, edge, region string, proto int) (Transition, error) {
	var grant Transition
	g := -1
	for i, tr := range slices.Backward(n.History) {
		if tr.To == api.StateLeased && tr.LeaseID == id && tr.LeaseToken == token && tr.Edge == edge {
			g = i
			break
		}
	}
	strict := proto >= lateRuleProtocol
	switch {
	case edge == "":
		return grant, fmt.Errorf("%w: node %s, lease %s token %d: a late result must name its edge", ErrNotInLease, n.Identity, id, token)
	case proto < lateMoveProtocol && region != "" && region != n.Region:
		return grant, fmt.Errorf("%w: node %s is in region %s, report names %s", ErrWrongRegion, n.Identity, n.Region, region)
	case g < 0:
		return grant, fmt.Errorf("%w: node %s has no grant of lease %s token %d to edge %s", ErrNotInLease, n.Identity, id, token, edge)
	case proto >= lateMoveProtocol && region != "" && region != grantRegion(n, g):
		return grant, fmt.Errorf("%w: node %s was in region %s when lease %s token %d was granted, report names %s", ErrWrongRegion, n.Identity, grantRegion(n, g), id, token, region)
	}
	for _, tr := range n.History[g+1:] {
		ours := tr.LeaseID == id && tr.LeaseToken == token
		final := tr.To == api.StateProvisioned || tr.To == api.StateShutdown
		switch {
		case ours && (final || strict && !byExpiry(tr)):
			return grant, fmt.Errorf("%w: node %s: lease %s token %d recorded its result already (%s)", ErrNotInLease, n.Identity, id, token, tr.Reason)
		case !ours && final:
			return grant, fmt.Errorf("%w: node %s was %s under lease %s token %d after lease %s token %d", ErrNotInLease, n.Identity, tr.To, tr.LeaseID, tr.LeaseToken, id, token)
		}
	}
	return n.History[g], nil
}

// grantRegion is the region node n was in when its history entry g was written: its region now,
// before each move recorded since. The history keeps every entry after g (it drops the oldest),
// so no move since is missed; one recorded below lateMoveProtocol carries no region and is not
// seen.
func grantRegion(n *Node, g int) string {
	region := n.Region
	for _, tr := range slices.Backward(n.History[g+1:]) {
		if tr.FromRegion != "" {
			region = tr.FromRegion
		}
	}
	return region
}

// applyLate applies result r of lease id and token, which no longer holds the node, if it is a
// late provisioned or shutdown result the node's history vouches for. It returns nil when the
// result is applied; the node leaves any newer lease that holds it now.
func applyLate(t *txn, old *Node, r Result, id string, token uint64, edge, region string, now time.Time, p Policy) error {
	if old == nil {
		return fmt.Errorf("%w: %s", ErrUnknownNode, r.Identity)
	}
	if !lateOutcome(r.Outcome) {
		return fmt.Errorf("%w: node %s, lease %s token %d", ErrNotInLease, r.Identity, id, token)
	}
	if old.State == api.StateBanned {
		// Recorded provisioned, a sighting would offer it again: the ban must hold.
		return fmt.Errorf("%w: node %s is banned by the operator; the late result of lease %s token %d is not recorded", ErrNotInLease, r.Identity, id, token)
	}
	if old.State == api.StateHeld {
		// Recorded provisioned, the node would be out of the queue without an approve.
		return fmt.Errorf("%w: node %s is held (%s) for an operator's approve; the late result of lease %s token %d is not recorded", ErrNotInLease, r.Identity, old.HoldReason, id, token)
	}
	grant, err := lateGrant(old, id, token, edge, region, readProtocol(t.meta))
	if err != nil {
		return err
	}
	if old.State == api.StateLeased && old.LeaseID != "" {
		if err := dropFromLease(t, old.LeaseID, old.Identity); err != nil {
			return storageError{err}
		}
	}
	n := *old
	n.History = slices.Clone(old.History)
	n.Edge = grant.Edge
	ls := &Lease{ID: id, Token: token, Edge: grant.Edge, Region: old.Region}
	applyOutcome(&n, r, ls, now, p, readProtocol(t.meta))
	if readProtocol(t.meta) >= lateLockProtocol && old.LockEdge != grant.Edge && old.LockUntil.After(now) {
		// Another edge called the node under a newer lease and holds go-choria's lock now. The
		// late edge's own lock ended a window after its lease did: the expiry recorded that
		// window and the newer grant waited it out. Taking the window would let the late edge be
		// offered the node inside the other edge's lock.
		n.LockEdge, n.LockUntil = old.LockEdge, old.LockUntil
	}
	last := &n.History[len(n.History)-1]
	last.Reason = fmt.Sprintf("%s (late report of lease %s token %d)", last.Reason, id, token)
	if err := t.putNode(old, &n); err != nil {
		return storageError{err}
	}
	return nil
}
