// SPDX-License-Identifier: Apache-2.0

package keys

import (
	"testing"
	"time"

	"github.com/choria-io/tokens"
	"github.com/golang-jwt/jwt/v5"
)

func TestJWTVerifier_SameTokenVerifiedOnce(t *testing.T) {
	k := newEdKey(t)
	v, err := NewJWTVerifier(k.pubHex(), Reload{})
	if err != nil {
		t.Fatal(err)
	}
	raw := provisioningJWT(t, k.pri, true, time.Hour)
	first, err := v.Validate(raw)
	if err != nil {
		t.Fatal(err)
	}
	first.Token = "changed by a caller"
	second, err := v.Validate(raw)
	if err != nil {
		t.Fatal(err)
	}
	if second.Token == first.Token {
		t.Fatal("a caller's change to its claims reached the cache")
	}
	if _, ok := v.verified.get(raw, v.static, time.Now()); !ok {
		t.Fatal("the verified token is not cached")
	}
	// The cached entry is bound to its key: another key never finds it.
	if _, ok := v.verified.get(raw, newEdKey(t).pub, time.Now()); ok {
		t.Fatal("a cached token was found under another key")
	}
}

func TestVerifiedCache_HonoursTheTokensOwnTimes(t *testing.T) {
	now := time.Now()
	at := func(d time.Duration) *jwt.NumericDate { return jwt.NewNumericDate(now.Add(d)) }
	c := &tokens.ProvisioningClaims{}
	c.ExpiresAt = at(time.Minute)
	if !stillValid(c, now) || stillValid(c, now.Add(time.Minute)) {
		t.Fatal("expiry not honoured")
	}
	c.NotBefore = at(time.Second)
	if stillValid(c, now) {
		t.Fatal("not-before not honoured")
	}
	c.NotBefore = nil
	c.IssuerExpiresAt = at(time.Second)
	if stillValid(c, now.Add(2*time.Second)) {
		t.Fatal("issuer expiry not honoured")
	}
}

func TestVerifiedCache_IsBounded(t *testing.T) {
	var c verifiedCache
	claims := &tokens.ProvisioningClaims{}
	for i := range verifiedCacheSize * 3 {
		c.put(string(rune('a'+i%26))+time.Duration(i).String(), "k", claims)
	}
	if len(c.entries) != verifiedCacheSize || len(c.order) != verifiedCacheSize {
		t.Fatalf("cache holds %d entries (%d ordered), want %d", len(c.entries), len(c.order), verifiedCacheSize)
	}
}
