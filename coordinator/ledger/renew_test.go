// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"testing"
	"time"
)

// TestLedger_RenewNeverMovesExpiryBackwards: two renewals applied out of stamp order, or one
// stamped by a new leader with a shorter TTL, leave the later expiry; the answer carries the TTL
// the renewal granted, which the edge counts from its send.
func TestLedger_RenewNeverMovesExpiryBackwards(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a")
	ls := h.grant(t0, "e", "eu", 1)
	late := mustResult[*RenewResult](t, h.apply(&Renew{Now: t0.Add(20 * time.Second), LeaseID: ls.ID, Token: ls.Token, TTL: time.Minute}))
	want := t0.Add(80 * time.Second)
	if !late.Lease.ExpiresAt.Equal(want) {
		t.Fatalf("renewed expiry %s, want %s", late.Lease.ExpiresAt, want)
	}
	for _, r := range []*Renew{
		{Now: t0.Add(10 * time.Second), LeaseID: ls.ID, Token: ls.Token, TTL: time.Minute},      // stamped earlier, applied later
		{Now: t0.Add(21 * time.Second), LeaseID: ls.ID, Token: ls.Token, TTL: 30 * time.Second}, // a leader with a shorter TTL
	} {
		got := mustResult[*RenewResult](t, h.apply(r))
		if got.Lease.ExpiresAt.Before(want) {
			t.Fatalf("renew %+v moved the expiry back to %s from %s", r, got.Lease.ExpiresAt, want)
		}
		if got.Lease.TTL != r.TTL {
			t.Fatalf("renew answered ttl %s, want the %s it granted", got.Lease.TTL, r.TTL)
		}
	}
	if cur, _ := h.l.Lease(ls.ID); cur.ExpiresAt.Before(want) {
		t.Fatalf("stored expiry %s before %s", cur.ExpiresAt, want)
	}
}
