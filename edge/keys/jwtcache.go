// SPDX-License-Identifier: Apache-2.0

package keys

import (
	"crypto/ed25519"
	"sync"
	"time"

	"github.com/choria-io/tokens"
)

// verifiedCacheSize bounds the tokens remembered as verified. A fleet usually boots from one
// golden image, so thousands of nodes present the same provisioning.jwt; a few sites share one
// edge, so a handful of tokens covers them.
const verifiedCacheSize = 64

// verifiedCache remembers provisioning JWTs already verified against a key, so the same bytes are
// not verified again for every node (ed25519 verification was a sixth of the edge's CPU per node
// with 10,000 nodes sharing one token). An entry is used only for the exact bytes and the same
// key, and only while the token's own validity (expiry, not-before, issuer expiry) still holds.
type verifiedCache struct {
	mu      sync.Mutex
	entries map[string]verifiedEntry
	order   []string // insertion order, for eviction
}

type verifiedEntry struct {
	key    any
	claims *tokens.ProvisioningClaims
}

func (c *verifiedCache) get(raw string, key any, now time.Time) (*tokens.ProvisioningClaims, bool) {
	c.mu.Lock()
	e, ok := c.entries[raw]
	c.mu.Unlock()
	if !ok || !sameKey(e.key, key) || !stillValid(e.claims, now) {
		return nil, false
	}
	// A copy: callers may keep or change what they get without touching the cache.
	claims := *e.claims
	return &claims, true
}

func (c *verifiedCache) put(raw string, key any, claims *tokens.ProvisioningClaims) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = make(map[string]verifiedEntry, verifiedCacheSize)
	}
	if _, ok := c.entries[raw]; !ok {
		if len(c.order) >= verifiedCacheSize {
			delete(c.entries, c.order[0])
			c.order = c.order[1:]
		}
		c.order = append(c.order, raw)
	}
	saved := *claims
	c.entries[raw] = verifiedEntry{key: key, claims: &saved}
}

// sameKey is true when a and b are the same verification key: ed25519 keys by value, others
// (RSA keys, parsed once per file version) by identity.
func sameKey(a, b any) bool {
	if ea, ok := a.(ed25519.PublicKey); ok {
		eb, ok := b.(ed25519.PublicKey)
		return ok && ea.Equal(eb)
	}
	return a == b
}

// stillValid repeats the time checks the token parser made when it verified the token.
func stillValid(c *tokens.ProvisioningClaims, now time.Time) bool {
	switch {
	case c.ExpiresAt != nil && !now.Before(c.ExpiresAt.Time):
		return false
	case c.NotBefore != nil && now.Before(c.NotBefore.Time):
		return false
	case c.IssuerExpiresAt != nil && !now.Before(c.IssuerExpiresAt.Time):
		return false
	}
	return true
}
