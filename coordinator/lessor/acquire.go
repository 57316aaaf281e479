// SPDX-License-Identifier: Apache-2.0

package lessor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/seed96588659/muster/coordinator/ledger"
)

// Request asks for a lease.
type Request struct {
	Edge   string
	Region string
	// RequestID, when set, makes the request idempotent: the lease id is derived from it, so a
	// retry (say, after the answer was lost in a failover) gets the lease the first try granted.
	RequestID string
	MaxNodes  int
	Wait      time.Duration
	// Reports are applied before the grant, in the grant's entry when one is made at once, and
	// else at once in an entry of their own while the acquire waits (carry).
	Reports []Carried
}

// leaseID is the lease id for r: random, or derived from the edge's request id.
func (m *Manager) leaseID(r Request) string {
	if r.RequestID == "" {
		return m.newID()
	}
	h := sha256.Sum256([]byte(r.Edge + "\x00" + r.Region + "\x00" + r.RequestID))
	return "r-" + hex.EncodeToString(h[:12])
}

// Acquired is the answer to an Acquire.
type Acquired struct {
	// Lease is the granted lease; nil when nothing was granted.
	Lease *ledger.Lease
	// Paused is true when nothing was granted because the operator paused provisioning.
	Paused bool
	// PauseAsOf and PauseEpoch are where Paused holds (ledger.PauseState's AsOf and Epoch).
	PauseAsOf, PauseEpoch uint64
	// HeldUntil, when not zero, is why nothing was granted: new grants are held after a recover
	// until then (ledger time).
	HeldUntil time.Time
	// Held is the monotonic time from the start of Acquire to the stamp of the grant: an edge
	// counts its lease from its send + Held, so a long poll never delivers a lease already
	// expired in the edge's view, and the edge's count still starts before the leader's.
	Held time.Duration
	// Reports answers Request.Reports in order; empty when the acquire failed before they were
	// applied.
	Reports []CarriedAnswer
}

// Acquire grants r.Edge a lease on up to r.MaxNodes eligible waiting nodes of r.Region, waiting
// up to r.Wait for some to become eligible. A retry of a request whose lease exists is answered
// with that lease, also while paused. The reports r carries are applied first, whether a lease
// is granted or not.
func (m *Manager) Acquire(ctx context.Context, r Request) (Acquired, error) {
	c := &carrying{pending: r.Reports}
	got, err := m.acquire(ctx, r, c)
	if err != nil {
		return Acquired{}, err
	}
	got.Reports = c.answers
	return got, nil
}

// attempt is one Acquire's request as the manager serves it.
type attempt struct {
	r        Request
	c        *carrying
	id       string
	maxNodes int
	// received is the monotonic reading when the request arrived (Acquired.Held).
	received time.Duration
}

// acquire looks for a grant, and while there is none waits for a change (a region's wake-up,
// any change, the recheck timer) until r.Wait ends.
func (m *Manager) acquire(ctx context.Context, r Request, c *carrying) (Acquired, error) {
	a := attempt{r: r, c: c, id: m.leaseID(r), maxNodes: r.MaxNodes, received: m.clock.Monotonic()}
	if a.maxNodes <= 0 || a.maxNodes > m.cfg.MaxNodes {
		a.maxNodes = m.cfg.MaxNodes
	}
	timer := time.NewTimer(min(max(r.Wait, 0), m.cfg.MaxWait))
	defer timer.Stop()
	m.enter(r.Region)
	defer m.leave(r.Region)
	for {
		regionCh, all, enabled := m.subscribe(r.Region)
		if !enabled {
			return Acquired{}, ErrDisabled
		}
		got, next, err := m.look(ctx, a)
		if err != nil || next == answered {
			return got, err
		}
		if next == lookAgain {
			continue
		}
		if r.Wait <= 0 {
			// No long poll: one look, whatever else woke meanwhile.
			return got, nil
		}
		recheck := time.NewTimer(m.cfg.Recheck)
		select {
		case <-regionCh:
		case <-all:
		case <-recheck.C:
		case <-timer.C:
			recheck.Stop()
			return got, nil
		case <-ctx.Done():
			recheck.Stop()
			return Acquired{}, ctx.Err()
		}
		recheck.Stop()
	}
}

// step is what an acquire does after one look.
type step int

const (
	// answered: the look's answer is the acquire's.
	answered step = iota
	// wait: nothing to grant; the look's answer is given if the wait ends with nothing.
	wait
	// lookAgain: reports carried alone may have made nodes eligible: look again at once.
	lookAgain
)

// look is one pass of an acquire, and what to do next.
func (m *Manager) look(ctx context.Context, a attempt) (Acquired, step, error) {
	edge, region := a.r.Edge, a.r.Region
	// A retry whose lease exists already is proposed too, although its nodes are no longer
	// eligible and even while paused: the log answers it, so a member deposed without knowing
	// it cannot answer from a stale ledger, and the lease's TTL is counted again from now, as
	// the edge counts it.
	replay := a.r.RequestID != "" && m.holds(a.id, edge, region)
	p, err := m.ledger.Pause()
	if err != nil {
		return Acquired{}, answered, fmt.Errorf("acquire for %s in %s: %w", edge, region, err)
	}
	now, err := m.Stamp()
	if err != nil {
		return Acquired{}, answered, err
	}
	if p.Paused && !replay {
		if _, err := m.carryAlone(ctx, a.c, now, a.r); err != nil {
			return Acquired{}, answered, err
		}
		return Acquired{Paused: true, PauseAsOf: p.AsOf, PauseEpoch: p.Epoch}, answered, nil
	}
	stamped := m.clock.Monotonic()
	heldUntil := time.Time{}
	if !replay {
		if heldUntil, err = m.heldAt(now); err != nil {
			return Acquired{}, answered, fmt.Errorf("acquire for %s in %s: %w", edge, region, err)
		}
	}
	ready, err := m.grantable(a, now, replay, heldUntil)
	if err != nil {
		return Acquired{}, answered, err
	}
	if !ready {
		// Nothing to grant yet: the results are not held for the long poll. The nodes they
		// give back may be eligible now, so the acquire looks again before it waits (a
		// select would pick at random between their wake-up and a zero wait's timer).
		carried, err := m.carryAlone(ctx, a.c, now, a.r)
		if err != nil {
			return Acquired{}, answered, err
		}
		if carried {
			return Acquired{}, lookAgain, nil
		}
		return Acquired{PauseAsOf: p.AsOf, PauseEpoch: p.Epoch, HeldUntil: heldUntil}, wait, nil
	}
	got, granted, err := m.tryGrant(ctx, a, now, stamped, p)
	if err != nil || granted {
		return got, answered, err
	}
	return Acquired{PauseAsOf: p.AsOf, PauseEpoch: p.Epoch, HeldUntil: heldUntil}, wait, nil
}

// grantable says whether a grant may be proposed now: a replay always, otherwise when no hold
// stops it and some node is eligible.
func (m *Manager) grantable(a attempt, now time.Time, replay bool, heldUntil time.Time) (bool, error) {
	if replay {
		return true, nil
	}
	if !heldUntil.IsZero() {
		return false, nil
	}
	n, err := m.ledger.Eligible(a.r.Region, a.r.Edge, now, 1)
	if err != nil {
		return false, fmt.Errorf("acquire for %s in %s: %w", a.r.Edge, a.r.Region, err)
	}
	return n > 0, nil
}

// tryGrant proposes the grant (with the reports still carried) and answers it: the lease, or
// why the log refused it (a newer hold, a newer pause); answered is false when the log had
// nothing to grant after all.
func (m *Manager) tryGrant(ctx context.Context, a attempt, now time.Time, stamped time.Duration, p ledger.PauseState) (got Acquired, answered bool, err error) {
	edge, region := a.r.Edge, a.r.Region
	res, err := m.grant(ctx, a.c, &ledger.Grant{
		Now: now, LeaseID: a.id, Edge: edge, Region: region, Max: a.maxNodes, TTL: m.cfg.TTL, Policy: m.cfg.Policy,
	})
	switch {
	case errors.Is(err, ledger.ErrHeld):
		// The ledger's hold is newer than the one read before: nothing granted, as held.
		h, err := m.ledger.Hold()
		if err != nil {
			return Acquired{}, true, fmt.Errorf("acquire for %s in %s: read hold on grants: %w", edge, region, err)
		}
		return Acquired{PauseAsOf: p.AsOf, PauseEpoch: p.Epoch, HeldUntil: h.Until}, true, nil
	case errors.Is(err, ledger.ErrPaused):
		// Paused as of the refused grant's index, which the answer cannot name: the flag
		// is read again, at that index or later.
		after, err := m.ledger.Pause()
		if err != nil {
			return Acquired{}, true, fmt.Errorf("acquire for %s in %s: read pause flag: %w", edge, region, err)
		}
		return Acquired{Paused: after.Paused, PauseAsOf: after.AsOf, PauseEpoch: after.Epoch}, true, nil
	case err != nil:
		return Acquired{}, true, fmt.Errorf("grant to %s in %s: %w", edge, region, err)
	}
	g := res.(*ledger.GrantResult)
	if g.Lease == nil {
		return Acquired{}, false, nil
	}
	m.countGrant(g)
	// A fresh grant was made not paused, at its own index (its token).
	got = Acquired{Lease: g.Lease, Held: stamped - a.received, PauseAsOf: g.Lease.Token, PauseEpoch: p.Epoch}
	if g.Replayed {
		// Answered even while paused, so it says whether the cluster is paused as of its
		// commit: the edge takes the answer's flag as the cluster's, and its hosts must read
		// as paused. A fresh grant is refused by the ledger while paused.
		after, err := m.ledger.Pause()
		if err != nil {
			return Acquired{}, true, fmt.Errorf("acquire for %s in %s: read pause flag: %w", edge, region, err)
		}
		got.Paused, got.PauseAsOf, got.PauseEpoch = after.Paused, after.AsOf, after.Epoch
	}
	return got, true, nil
}

// carryAlone proposes the reports r still carries, without a grant; carried says it had some.
func (m *Manager) carryAlone(ctx context.Context, c *carrying, now time.Time, r Request) (carried bool, err error) {
	if len(c.pending) == 0 {
		return false, nil
	}
	if _, _, err := m.carry(ctx, c, now, nil); err != nil {
		return false, fmt.Errorf("reports carried by the acquire of %s in %s: %w", r.Edge, r.Region, err)
	}
	return true, nil
}

// grant proposes g, with the reports still carried if there are any.
func (m *Manager) grant(ctx context.Context, c *carrying, g *ledger.Grant) (any, error) {
	if len(c.pending) == 0 {
		return m.propose(ctx, g)
	}
	res, gerr, err := m.carry(ctx, c, g.Now, g)
	if err != nil {
		return nil, err
	}
	return res, gerr
}

// holds reports whether edge already holds lease id in region.
func (m *Manager) holds(id, edge, region string) bool {
	ls, err := m.ledger.Lease(id)
	return err == nil && ls.Edge == edge && ls.Region == region
}

func (m *Manager) countGrant(g *ledger.GrantResult) {
	switch {
	case m.metrics == nil:
	case g.Replayed:
		m.metrics.LeaseReplays.Inc()
	default:
		m.metrics.LeaseGrants.Inc()
		m.metrics.LeaseNodesGranted.Add(float64(len(g.Lease.Nodes)))
	}
}
