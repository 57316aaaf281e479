// SPDX-License-Identifier: Apache-2.0

package lessor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/seed96588659/muster/coordinator/ledger"
)

// The hold after a recover (ledger/hold.go says why). Its length: any lease the lost members
// granted was acknowledged before they were lost, so before this leadership began; its edge's
// count ends within the longest TTL an answer gave it, plus the extension: this leader's TTL, or
// longer when a lease of this ledger had more left (promotionTTL), was last renewed with a longer
// one, or the operator told recover of a longer lease.ttl on a lost member (RecoverMark.LeaseTTL,
// which no survivor's log may show). The leader's grace covers the drift, and go-choria keeps
// the node locked to that edge for the lock window after its last call.
// Ledger time never runs ahead of real time, across leaders either, so a hold that ends at this
// leadership's anchor plus that length lasts at least that long in real time.
//
// From cluster protocol 7 the hold is a log entry (ledger.Hold): every member agrees on its end,
// a later leader keeps it, and applying it clears every member's recover mark. Below 7 an older
// member would halt at the entry, so the leader holds in memory and the mark stays: each new
// leader that finds its mark holds again from its own start (longer, never shorter), until the
// protocol reaches 7 and a leader writes the hold it keeps in memory.

// Hold is the hold on new grants this member knows of.
type Hold struct {
	Until  time.Time
	Reason string
	// Remaining is how long the hold lasts from this leader's now; zero on a follower.
	Remaining time.Duration
}

// recoverHold is how long a leader that finds a recover mark holds new grants, given the
// promotion TTL it extended the leases by.
func (m *Manager) recoverHold(promotion time.Duration) time.Duration {
	return promotion + m.cfg.Grace + m.cfg.Policy.LockWindow
}

// longestLeaseTTL is the longest TTL a lease of this ledger was last granted or renewed with.
// Members may run different lease.ttl values (a rolling change): a lost leader of a longer one
// told its edges to count longer than this leader's TTL, and the leases the survivors know carry
// that TTL from the last renewal they applied. A leader whose every entry was lost is known only
// to the operator (RecoverMark.LeaseTTL; sim seed 461: an edge counted a 1-minute renewal the
// recover lost past the hold of a 10-second survivor).
func (m *Manager) longestLeaseTTL() (time.Duration, error) {
	leases, err := m.ledger.Leases()
	if err != nil {
		return 0, fmt.Errorf("read outstanding leases: %w", err)
	}
	var longest time.Duration
	for _, ls := range leases {
		longest = max(longest, ls.TTL)
	}
	return longest, nil
}

// holdReason is the reason a hold after the recover mark gives to the operator.
func holdReason(mark ledger.RecoverMark, d time.Duration) string {
	return fmt.Sprintf("recover at %s made %s the whole cluster; a lease the lost members granted may still be held: "+
		"no node is offered for %s (TTL, grace and go-choria's lock window)", mark.At.Format(time.RFC3339), strings.Join(mark.Peers, ","), d)
}

// holdOnPromotion is Enable's step after the extend: with a recover mark in the ledger, hold new
// grants from anchor (this leadership's ledger time at monotonic reading mono) for the recover
// hold, in the log from protocol 7, else in memory (returned).
func (m *Manager) holdOnPromotion(ctx context.Context, anchor time.Time, mono, promotion time.Duration) (memory Hold, err error) {
	mark, marked, err := m.ledger.Recovered()
	if err != nil || !marked {
		return Hold{}, err
	}
	longest, err := m.longestLeaseTTL()
	if err != nil {
		return Hold{}, err
	}
	d := m.recoverHold(max(promotion, max(longest, mark.LeaseTTL)+m.cfg.Extension))
	h := Hold{Until: anchor.Add(d), Reason: holdReason(mark, d)}
	proto, err := m.ledger.ClusterProtocol()
	if err != nil {
		return Hold{}, err
	}
	if proto < ledger.HoldProtocol {
		m.log.Warn("grants held after a recover, in this leader's memory: the cluster protocol cannot record the hold yet",
			"until", h.Until, "for", d, "cluster_protocol", proto, "reason", h.Reason)
		return h, nil
	}
	// Stamped with this leadership's ledger time now, as every entry is; it ends at anchor + d.
	now := anchor.Add(m.clock.Monotonic() - mono)
	if _, err := m.propose(ctx, &ledger.Hold{Now: now, Until: h.Until, Reason: h.Reason}); err != nil {
		return Hold{}, fmt.Errorf("hold grants after a recover: %w", err)
	}
	m.log.Warn("grants held after a recover", "until", h.Until, "for", d, "reason", h.Reason)
	return Hold{}, nil
}

// recordHold writes the hold this leader keeps in memory to the log once the cluster protocol
// allows it (the expiry loop calls it), clearing every member's recover mark.
func (m *Manager) recordHold(ctx context.Context) error {
	m.mu.Lock()
	h := m.memHold
	m.mu.Unlock()
	if h.Until.IsZero() {
		return nil
	}
	if proto, err := m.ledger.ClusterProtocol(); err != nil || proto < ledger.HoldProtocol {
		return err
	}
	now, err := m.Stamp()
	if err != nil {
		return err
	}
	// A hold already over is written too: applying it clears the marks, so no later leader holds again.
	if _, err := m.propose(ctx, &ledger.Hold{Now: now, Until: h.Until, Reason: h.Reason}); err != nil {
		return fmt.Errorf("record the hold on grants after a recover: %w", err)
	}
	m.mu.Lock()
	m.memHold = Hold{}
	m.mu.Unlock()
	m.log.Info("hold on grants after a recover recorded in the ledger", "until", h.Until)
	return nil
}

// GrantHold is the hold on new grants in force: the ledger's, or the one this leader keeps in
// memory; ok is false when none holds. A follower, which has no clock of the ledger's, compares
// the ledger's hold with the ledger's latest stamp.
func (m *Manager) GrantHold() (h Hold, ok bool, err error) {
	rec, err := m.ledger.Hold()
	if err != nil {
		return Hold{}, false, err
	}
	h = Hold{Until: rec.Until, Reason: rec.Reason}
	m.mu.Lock()
	if m.memHold.Until.After(h.Until) {
		h = m.memHold
	}
	m.mu.Unlock()
	now, err := m.Stamp()
	if err != nil {
		if now, err = m.ledger.LastStamp(); err != nil {
			return Hold{}, false, err
		}
		return h, now.Before(h.Until), nil
	}
	h.Remaining = h.Until.Sub(now)
	return h, now.Before(h.Until), nil
}

// heldAt is the end of the hold that stops a new grant stamped now, or zero.
func (m *Manager) heldAt(now time.Time) (time.Time, error) {
	rec, err := m.ledger.Hold()
	if err != nil {
		return time.Time{}, fmt.Errorf("read hold on grants: %w", err)
	}
	until := rec.Until
	m.mu.Lock()
	if m.memHold.Until.After(until) {
		until = m.memHold.Until
	}
	m.mu.Unlock()
	if now.Before(until) {
		return until, nil
	}
	return time.Time{}, nil
}
