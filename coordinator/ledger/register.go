// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"bytes"

	"github.com/seed96588659/muster/pkg/api"
)

// seenAgainReason is a finished node's requeue by a sighting (a reason code: codec.go).
const seenAgainReason = "seen again in provisioning mode"

func applyRegister(t *txn, c *Register) (any, error) {
	if err := validBatch(c.Now, c.Policy, len(c.Nodes), "register", "nodes"); err != nil {
		return nil, err
	}
	approval := c.Approval
	if readProtocol(t.meta) < HeldProtocol {
		approval = nil // the builds before hold nothing
	} else if approval != nil {
		if err := approval.Validate(); err != nil {
			return nil, err
		}
	}
	res := &RegisterResult{}
	for _, rn := range c.Nodes {
		if err := validID("node identity", rn.Identity); err != nil {
			res.Rejected = append(res.Rejected, reject(rn.Identity, err))
			continue
		}
		if err := validID("region of node "+rn.Identity, rn.Region); err != nil {
			res.Rejected = append(res.Rejected, reject(rn.Identity, err))
			continue
		}
		if len(rn.Facts) > maxFactsLen {
			res.Rejected = append(res.Rejected, reject(rn.Identity, errorf("facts of node %s exceed %d bytes", rn.Identity, maxFactsLen)))
			continue
		}
		old, err := getNode(t.nodes, rn.Identity)
		if err != nil {
			return nil, storageError{err}
		}
		if old == nil {
			n := &Node{
				Identity: rn.Identity, Region: rn.Region, InventoryVersion: rn.InventoryVersion,
				Facts: rn.Facts, DiscoveredAt: c.Now, NotBefore: c.Now,
			}
			tr := Transition{At: c.Now, Reason: "discovered", Edge: c.Edge}
			if approval.manualFor(rn.Region) {
				n.hold(tr, "discovered", api.HoldManual, "region "+rn.Region+" is in approval.manual", c.Policy.HistoryLimit)
				res.Held = append(res.Held, rn.Identity)
				res.Final = append(res.Final, rn.Identity)
			} else {
				n.transition(api.StateWaiting, tr, c.Policy.HistoryLimit)
			}
			if err := t.putNode(nil, n); err != nil {
				return nil, storageError{err}
			}
			if n.State == api.StateHeld {
				if err := t.auditHold(n, ""); err != nil {
					return nil, storageError{err}
				}
			}
			res.Added++
			continue
		}
		// A registration names the region of the edge that saw the node; from regionProtocol on
		// it never moves a known node (another region's edge could take it over), below it only a
		// leased one stays, as the builds before applied it.
		if old.Region != rn.Region && (old.State == api.StateLeased || readProtocol(t.meta) >= regionProtocol) {
			res.Rejected = append(res.Rejected, reject(rn.Identity, otherRegion(rn.Identity, old.Region, rn.Region)))
			continue
		}
		n := *old
		n.History = append([]Transition(nil), old.History...)
		changed := n.Region != rn.Region || n.InventoryVersion != rn.InventoryVersion || (len(rn.Facts) > 0 && !bytes.Equal(n.Facts, rn.Facts))
		n.Region = rn.Region
		n.InventoryVersion = rn.InventoryVersion
		if len(rn.Facts) > 0 {
			n.Facts = rn.Facts
		}
		requeue := ""
		switch old.State {
		case api.StateProvisioned, api.StateShutdown, api.StateGone:
			// A sweep that ran before the result may list a node that has just left
			// provisioning mode; reprovision_after keeps it from being offered again at once.
			// A node a live lease still fences waits for that lease's end (fence.go).
			if !c.Now.Before(old.FinishedAt.Add(c.Policy.ReprovisionAfter)) && fencedBy(t.fences, old.Identity) == "" {
				requeue = seenAgainReason
				n.Attempts = 0
				n.LastError = ""
			}
		case api.StateDeferred:
			if !c.Now.Before(old.NotBefore) {
				requeue = "seen again after defer"
			}
		}
		holdWhy, holdDetail := "", ""
		if requeue == seenAgainReason {
			holdWhy, holdDetail = approval.reentryHold(old, c.Now)
		}
		switch {
		case holdWhy != "":
			n.hold(Transition{At: c.Now, Edge: c.Edge}, requeue, holdWhy, holdDetail, c.Policy.HistoryLimit)
			res.Held = append(res.Held, rn.Identity)
			res.Final = append(res.Final, rn.Identity)
		case requeue != "":
			n.NotBefore = maxTime(n.NotBefore, c.Now)
			n.transition(api.StateWaiting, Transition{At: c.Now, Reason: requeue, Edge: c.Edge}, c.Policy.HistoryLimit)
			res.Requeued++
		case old.State != api.StateWaiting && old.State != api.StateLeased:
			res.Final = append(res.Final, rn.Identity)
			fallthrough
		default:
			res.Unchanged++
			if !changed {
				continue
			}
		}
		if err := t.putNode(old, &n); err != nil {
			return nil, storageError{err}
		}
		if holdWhy != "" {
			if err := t.auditHold(&n, old.State); err != nil {
				return nil, storageError{err}
			}
		}
	}
	return res, nil
}
