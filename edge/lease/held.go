// SPDX-License-Identifier: Apache-2.0

package lease

import (
	"sync"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// Held is a lease as the edge counts it: valid until its monotonic deadline. A zero TTL means
// the lease never expires (the local source's).
type Held struct {
	lease  api.Lease
	margin time.Duration

	mu       sync.Mutex
	deadline time.Time // carries a monotonic reading; zero when the lease does not expire
	lost     bool      // the deadline passed once: no later renewal brings the lease back
	// dropped holds the nodes a renewal answer no longer listed: the ledger took them out of the
	// lease (a late result of an earlier lease recorded them), and no later answer gives them back.
	dropped map[string]bool
	// owed counts the nodes whose result is not settled yet (reported, refused, given up or
	// withheld): the lease is renewed until none is left.
	owed int
}

// NewHeld starts counting l from sent (a time.Now() reading taken just before the acquire was
// sent) plus held, the server's time holding the request: api.AcquireResponse.ValidUntil.
func NewHeld(l api.Lease, sent time.Time, held, margin time.Duration) *Held {
	h := &Held{lease: l, margin: margin, owed: len(l.Nodes)}
	if l.TTL.Std() > 0 {
		h.extend(api.AcquireResponse{Lease: &l, Held: api.Duration(held)}.ValidUntil(sent, margin))
	}
	return h
}

// Lease is the lease as granted (or last renewed).
func (h *Held) Lease() api.Lease {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lease
}

// Renewed moves the deadline to sent + ttl - margin (api.RenewResponse.ValidUntil: a renewal is
// never held); it never moves it backwards, and once the lease was seen lapsed it stays lost:
// its hosts have stopped and are reported as stopped by lease loss. A node of the lease that
// the answer no longer lists is no longer held (Holds), for good; an answer without a node list
// (nil) changes none.
func (h *Held) Renewed(l api.Lease, sent time.Time) {
	h.mu.Lock()
	h.lease.TTL, h.lease.ExpiresAt = l.TTL, l.ExpiresAt
	if l.Nodes != nil {
		listed := make(map[string]bool, len(l.Nodes))
		for _, id := range l.Nodes {
			listed[id] = true
		}
		for _, id := range h.lease.Nodes {
			if !listed[id] {
				if h.dropped == nil {
					h.dropped = map[string]bool{}
				}
				h.dropped[id] = true
			}
		}
	}
	h.mu.Unlock()
	if l.TTL.Std() > 0 {
		h.extend(api.RenewResponse{Lease: l}.ValidUntil(sent, h.margin))
	}
}

func (h *Held) extend(d time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.lost && d.After(h.deadline) {
		h.deadline = d
	}
}

// Deadline is when the edge stops acting on the lease (monotonic); zero when it never expires.
func (h *Held) Deadline() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.deadline
}

// Expires says whether the lease can run out at all.
func (h *Held) Expires() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lease.TTL.Std() > 0
}

// Valid is true while now is before the deadline; now must carry a monotonic reading.
func (h *Held) Valid(now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lost {
		return false
	}
	if h.deadline.IsZero() || now.Before(h.deadline) {
		return true
	}
	h.lost = true
	return false
}

// Holds is false once a renewal answer left node id out of the lease: the edge must stop acting
// on it even while the lease is valid, because the ledger may offer it to another edge once this
// lease has ended on the leader's count.
func (h *Held) Holds(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.dropped[id]
}

// Settled counts n more of the lease's results settled and reports whether none is left.
func (h *Held) Settled(n int) (none bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.owed = max(h.owed-n, 0)
	return h.owed == 0
}

// Renews says whether the lease is to be renewed at now: it is valid and some of its results
// are not settled yet. A lease that never expires is never renewed.
func (h *Held) Renews(now time.Time) bool {
	h.mu.Lock()
	owed, expires := h.owed, h.lease.TTL.Std() > 0
	h.mu.Unlock()
	return expires && owed > 0 && h.Valid(now)
}

// RenewPace is, from the TTL the lease has when a renewal is sent, how long after it the next
// is sent: a third of the TTL, so two may fail before the lease runs out, or retry, a tenth of
// it (at least 100 ms) after a renewal that failed and may succeed soon. The deadline is
// counted from the last acknowledged renewal either way.
func (h *Held) RenewPace() (next, retry time.Duration) {
	ttl := h.Lease().TTL.Std()
	return ttl / 3, max(ttl/10, 100*time.Millisecond)
}

// Ended is lease l as a result settled after its hosts ended is reported under: its id, token,
// edge and region, no nodes (so its results go by age, alone: lease.Batches) and no renewals.
func Ended(l api.Lease) *Held {
	return NewHeld(api.Lease{ID: l.ID, Token: l.Token, Edge: l.Edge, Region: l.Region}, time.Time{}, 0, 0)
}
