// SPDX-License-Identifier: Apache-2.0

package keys

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/choria-io/tokens"
	"github.com/golang-jwt/jwt/v5"

	"github.com/seed96588659/muster/pkg/testkit"
)

func TestSigner_SignsVerifiableServerJWT(t *testing.T) {
	signer, node := newEdKey(t), newEdKey(t)
	clock := newFakeClock()
	s, err := NewSigner(SignerConfig{SigningKey: seedFile(t, signer), Validity: 48 * time.Hour, Reload: Reload{Clock: clock.Now}})
	if err != nil {
		t.Fatal(err)
	}
	signed, err := s.Sign(ServerJWTRequest{Identity: "n1.example.net", PublicKey: node.pubHex()})
	if err != nil {
		t.Fatal(err)
	}

	c, err := tokens.ParseServerToken(signed, signer.pub)
	if err != nil {
		t.Fatalf("server JWT does not verify with the signer's public key: %v", err)
	}
	if c.ChoriaIdentity != "n1.example.net" || c.OrganizationUnit != "choria" || !slices.Equal(c.Collectives, []string{"mcollective"}) {
		t.Errorf("claims = identity %q org %q collectives %v", c.ChoriaIdentity, c.OrganizationUnit, c.Collectives)
	}
	if c.PublicKey != node.pubHex() || c.Issuer != "Choria Provisioner" || c.Purpose != tokens.ServerPurpose {
		t.Errorf("claims = public key %q issuer %q purpose %q", c.PublicKey, c.Issuer, c.Purpose)
	}
	if !c.IssuedAt.Equal(clock.Now()) || !c.ExpiresAt.Equal(clock.Now().Add(48*time.Hour)) {
		t.Errorf("issued %v expires %v, want %v and 48h later", c.IssuedAt, c.ExpiresAt, clock.Now())
	}
	if c.Permissions != nil || c.AdditionalPublishSubjects != nil {
		t.Errorf("permissions %+v, publish subjects %v, want none", c.Permissions, c.AdditionalPublishSubjects)
	}
	if _, err := tokens.ParseServerToken(signed, newEdKey(t).pub); err == nil {
		t.Error("server JWT verifies with another key")
	}
}

func TestSigner_DefaultValidityIsOneYear(t *testing.T) {
	clock := newFakeClock()
	s, err := NewSigner(SignerConfig{SigningKey: seedFile(t, newEdKey(t)), Reload: Reload{Clock: clock.Now}})
	if err != nil {
		t.Fatal(err)
	}
	c := signAndParse(t, s, ServerJWTRequest{Identity: "n1", PublicKey: newEdKey(t).pubHex()})
	if !c.ExpiresAt.Equal(clock.Now().Add(365 * 24 * time.Hour)) {
		t.Errorf("expires %v, want a year after %v", c.ExpiresAt, clock.Now())
	}
}

func TestSigner_CollectivesFromConfiguration(t *testing.T) {
	s, err := NewSigner(SignerConfig{SigningKey: seedFile(t, newEdKey(t))})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		cfg  map[string]string
		want []string
	}{
		{"default", nil, []string{"mcollective"}},
		{"choria security", map[string]string{"plugin.security.provider": "choria"}, []string{"choria"}},
		{"other security", map[string]string{"plugin.security.provider": "file"}, []string{"mcollective"}},
		{"collectives key", map[string]string{"plugin.security.provider": "choria", "collectives": "eu,us"}, []string{"eu", "us"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := signAndParse(t, s, ServerJWTRequest{Identity: "n1", PublicKey: newEdKey(t).pubHex(), Configuration: tc.cfg})
			if !slices.Equal(c.Collectives, tc.want) {
				t.Errorf("collectives %v, want %v", c.Collectives, tc.want)
			}
		})
	}
}

func TestSigner_ServerClaimsOverride(t *testing.T) {
	clock := newFakeClock()
	s, err := NewSigner(SignerConfig{SigningKey: seedFile(t, newEdKey(t)), Reload: Reload{Clock: clock.Now}})
	if err != nil {
		t.Fatal(err)
	}
	perms := &tokens.ServerPermissions{Submission: true, Streams: true}
	c := signAndParse(t, s, ServerJWTRequest{
		Identity:      "n1",
		PublicKey:     newEdKey(t).pubHex(),
		Configuration: map[string]string{"collectives": "eu,us"},
		Claims: &tokens.ServerClaims{
			OrganizationUnit:          "acme",
			Collectives:               []string{"acme"},
			AdditionalPublishSubjects: []string{"acme.registration"},
			Permissions:               perms,
			StandardClaims:            tokens.StandardClaims{RegisteredClaims: jwt.RegisteredClaims{ExpiresAt: jwt.NewNumericDate(clock.Now().Add(3 * time.Hour))}},
		},
	})
	if c.OrganizationUnit != "acme" || !slices.Equal(c.Collectives, []string{"acme"}) || !slices.Equal(c.AdditionalPublishSubjects, []string{"acme.registration"}) {
		t.Errorf("claims = org %q collectives %v publish %v", c.OrganizationUnit, c.Collectives, c.AdditionalPublishSubjects)
	}
	if c.Permissions == nil || *c.Permissions != *perms {
		t.Errorf("permissions %+v, want %+v", c.Permissions, perms)
	}
	if !c.ExpiresAt.Equal(clock.Now().Add(3 * time.Hour)) {
		t.Errorf("expires %v, want the helper's %v", c.ExpiresAt, clock.Now().Add(3*time.Hour))
	}
}

func TestSigner_ShortExpiryClaimFallsBackToValidity(t *testing.T) {
	clock := newFakeClock()
	var logs testkit.LogBuffer
	s, err := NewSigner(SignerConfig{SigningKey: seedFile(t, newEdKey(t)), Validity: 24 * time.Hour, Reload: Reload{Clock: clock.Now}, Logger: logs.Logger(slog.LevelInfo)})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []time.Duration{time.Hour, 30 * time.Minute, -time.Hour} {
		claims := &tokens.ServerClaims{StandardClaims: tokens.StandardClaims{RegisteredClaims: jwt.RegisteredClaims{ExpiresAt: jwt.NewNumericDate(clock.Now().Add(in))}}}
		c := signAndParse(t, s, ServerJWTRequest{Identity: "n1", PublicKey: newEdKey(t).pubHex(), Claims: claims})
		if !c.ExpiresAt.Equal(clock.Now().Add(24 * time.Hour)) {
			t.Errorf("expires_at in %v: expires %v, want server_jwt_validity after %v", in, c.ExpiresAt, clock.Now())
		}
	}
	if got := strings.Count(logs.String(), "server_claims expires_at is too soon"); got != 3 {
		t.Errorf("%d warnings, want 3:\n%s", got, logs.String())
	}
}

func TestSigner_ChainsToOrganizationIssuer(t *testing.T) {
	org, signer, node := newEdKey(t), newEdKey(t), newEdKey(t)
	clock := newFakeClock()
	raw, issuer := chainToken(t, org, signer, 30*24*time.Hour)
	tokenPath := tempPath(t, "signer.jwt")
	writeFile(t, tokenPath, []byte(raw+"\n"))

	s, err := NewSigner(SignerConfig{SigningKey: seedFile(t, signer), SigningToken: tokenPath, Reload: Reload{Clock: clock.Now}})
	if err != nil {
		t.Fatal(err)
	}
	signed, err := s.Sign(ServerJWTRequest{Identity: "n1.example.net", PublicKey: node.pubHex(), Configuration: map[string]string{"plugin.security.provider": "choria"}})
	if err != nil {
		t.Fatal(err)
	}

	c, err := tokens.ParseServerToken(signed, org.pub)
	if err != nil {
		t.Fatalf("chained server JWT does not verify with the Organization Issuer's key: %v", err)
	}
	if want := fmt.Sprintf("C-%s.%s", issuer.ID, signer.pubHex()); c.Issuer != want {
		t.Errorf("issuer %q, want %q", c.Issuer, want)
	}
	if c.ChoriaIdentity != "n1.example.net" || !slices.Equal(c.Collectives, []string{"choria"}) {
		t.Errorf("claims = identity %q collectives %v", c.ChoriaIdentity, c.Collectives)
	}
	// the chain caps the server JWT at the issuer token's expiry
	if !c.ExpiresAt.Equal(issuer.ExpiresAt.Time) || !c.IssuerExpiresAt.Equal(issuer.ExpiresAt.Time) {
		t.Errorf("expires %v, issuer expires %v, want %v", c.ExpiresAt, c.IssuerExpiresAt, issuer.ExpiresAt)
	}
	if _, err := tokens.ParseServerToken(signed, newEdKey(t).pub); err == nil {
		t.Error("chained server JWT verifies with another issuer's key")
	}
}

func TestSigner_RejectsBadNodeKey(t *testing.T) {
	s, err := NewSigner(SignerConfig{SigningKey: seedFile(t, newEdKey(t))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sign(ServerJWTRequest{Identity: "n1"}); !errors.Is(err, ErrNoNodePublicKey) {
		t.Errorf("no public key: got %v, want %v", err, ErrNoNodePublicKey)
	}
	cases := map[string]string{"zz": "node ed25519 public key: encoding/hex", "abcd": "node ed25519 public key is 2 bytes, want 32"}
	for pub, want := range cases {
		_, err := s.Sign(ServerJWTRequest{Identity: "n1", PublicKey: pub})
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("public key %q: got %v, want %q", pub, err, want)
		}
	}
	if _, err := s.Sign(ServerJWTRequest{PublicKey: newEdKey(t).pubHex()}); err == nil || !strings.Contains(err.Error(), "identity is required") {
		t.Errorf("no identity: got %v", err)
	}
	if _, err := s.Sign(ServerJWTRequest{Identity: "n1", PublicKey: newEdKey(t).pubHex(), Configuration: map[string]string{"collectives": ""}}); err != nil {
		// strings.Split gives [""]: one (empty) collective, as choria-provisioner does
		t.Errorf("empty collectives key: %v", err)
	}
}

func TestNewSigner_BadConfiguration(t *testing.T) {
	signer := newEdKey(t)
	key := seedFile(t, signer)
	bad := tempPath(t, "bad.seed")
	writeFile(t, bad, []byte("abcd"))
	notHex := tempPath(t, "nothex.seed")
	writeFile(t, notHex, []byte("not hex"))

	noChain := tempPath(t, "nochain.jwt")
	plain, err := tokens.NewClientIDClaims("provisioner", nil, "choria", nil, "", "", time.Hour, nil, signer.pub)
	if err != nil {
		t.Fatal(err)
	}
	signedPlain, err := tokens.SignToken(plain, signer.pri)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, noChain, []byte(signedPlain))
	garbage := tempPath(t, "garbage.jwt")
	writeFile(t, garbage, []byte("garbage"))
	otherKey := tempPath(t, "other.jwt")
	rawOther, _ := chainToken(t, newEdKey(t), newEdKey(t), time.Hour)
	writeFile(t, otherKey, []byte(rawOther))

	cases := []struct {
		name string
		cfg  SignerConfig
		want string
	}{
		{"no key", SignerConfig{}, "no jwt signing key configured using jwt_signing_key"},
		{"missing key", SignerConfig{SigningKey: "/nonexistent/signer.seed"}, "jwt_signing_key /nonexistent/signer.seed: no such file or directory"},
		{"short seed", SignerConfig{SigningKey: bad}, "jwt_signing_key " + bad + ": ed25519 seed: invalid seed length"},
		{"seed not hex", SignerConfig{SigningKey: notHex}, "jwt_signing_key " + notHex + ": not a hex ed25519 seed (7 bytes)"},
		{"negative validity", SignerConfig{SigningKey: key, Validity: -time.Hour}, "server_jwt_validity -1h0m0s is negative"},
		{"negative interval", SignerConfig{SigningKey: key, Reload: Reload{Interval: -1}}, "key file reload interval -1ns is negative"},
		{"missing token", SignerConfig{SigningKey: key, SigningToken: "/nonexistent/signer.jwt"}, "jwt_signing_token /nonexistent/signer.jwt: no such file"},
		{"token without chain", SignerConfig{SigningKey: key, SigningToken: noChain}, "jwt_signing_token " + noChain + ": no Trust Chain Signature claim in JWT Signing Token"},
		{"garbage token", SignerConfig{SigningKey: key, SigningToken: garbage}, "jwt_signing_token " + garbage + ": parse client JWT"},
		{"token for another key", SignerConfig{SigningKey: key, SigningToken: otherKey}, "jwt_signing_token " + otherKey + " was issued for public key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewSigner(tc.cfg)
			if err == nil || s != nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error starting %q", err, tc.want)
			}
			if strings.Contains(err.Error(), fmt.Sprintf("%x", signer.seed)) {
				t.Fatal("error carries the seed")
			}
		})
	}
}

func TestSigner_ExpiredChainTokenFailsNode(t *testing.T) {
	org, signer := newEdKey(t), newEdKey(t)
	clock := newFakeClock()
	raw, issuer := chainToken(t, org, signer, 2*time.Hour)
	tokenPath := tempPath(t, "signer.jwt")
	writeFile(t, tokenPath, []byte(raw))
	s, err := NewSigner(SignerConfig{SigningKey: seedFile(t, signer), SigningToken: tokenPath, Reload: Reload{Clock: clock.Now}})
	if err != nil {
		t.Fatal(err)
	}
	req := ServerJWTRequest{Identity: "n1", PublicKey: newEdKey(t).pubHex()}
	if _, err := s.Sign(req); err != nil {
		t.Fatal(err)
	}
	clock.Advance(3 * time.Hour)
	_, err = s.Sign(req)
	if want := "jwt_signing_token expired at " + issuer.ExpiresAt.UTC().Format(time.RFC3339); err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
}

func signAndParse(t *testing.T, s *Signer, req ServerJWTRequest) *tokens.ServerClaims {
	t.Helper()
	signed, err := s.Sign(req)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tokens.ParseServerTokenUnverified(signed)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func BenchmarkSigner_Sign(b *testing.B) {
	benchSign(b, SignerConfig{SigningKey: seedFile(b, newEdKey(b)), Reload: Reload{Interval: time.Second}})
}

func BenchmarkSigner_SignChain(b *testing.B) {
	signer := newEdKey(b)
	raw, _ := chainToken(b, newEdKey(b), signer, time.Hour*24)
	tokenPath := tempPath(b, "signer.jwt")
	writeFile(b, tokenPath, []byte(raw))
	benchSign(b, SignerConfig{SigningKey: seedFile(b, signer), SigningToken: tokenPath, Reload: Reload{Interval: time.Second}})
}

// benchSign signs one server JWT per op with the signer cfg makes.
func benchSign(b *testing.B, cfg SignerConfig) {
	s, err := NewSigner(cfg)
	if err != nil {
		b.Fatal(err)
	}
	req := ServerJWTRequest{Identity: "n1.example.net", PublicKey: newEdKey(b).pubHex()}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Sign(req); err != nil {
			b.Fatal(err)
		}
	}
}
