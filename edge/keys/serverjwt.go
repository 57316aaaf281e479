// SPDX-License-Identifier: Apache-2.0

package keys

import (
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/choria-io/go-choria/choria"
	"github.com/choria-io/tokens"
	"github.com/golang-jwt/jwt/v5"
	"github.com/segmentio/ksuid"
)

const (
	// DefaultServerJWTValidity is server_jwt_validity when it is not configured: one year.
	DefaultServerJWTValidity = 365 * 24 * time.Hour
	// serverJWTIssuer is the issuer choria-provisioner puts on server JWTs it signs without a chain.
	serverJWTIssuer = "Choria Provisioner"
	// minClaimValidity is the shortest validity a helper's expires_at may ask for; a shorter one
	// falls back to server_jwt_validity.
	minClaimValidity = time.Hour
)

// ErrNoNodePublicKey fails signing for a node that sent no ed25519 public key.
var ErrNoNodePublicKey = errors.New("no ed25519 public key set")

// SignerConfig is what a Signer is built from.
type SignerConfig struct {
	// SigningKey is jwt_signing_key: a file holding a hex ed25519 seed.
	SigningKey string
	// SigningToken is jwt_signing_token: a file holding the client JWT an Organization Issuer
	// issued for SigningKey, which makes the signed server JWTs part of its trust chain. Optional.
	SigningToken string
	// Validity is server_jwt_validity; 0 means DefaultServerJWTValidity.
	Validity time.Duration
	// Reload says how often SigningKey and SigningToken are checked for rotation.
	Reload Reload
	// Logger receives warnings about helper claims that were overridden; nil discards them.
	Logger *slog.Logger
}

// ServerJWTRequest is one node's server JWT to sign.
type ServerJWTRequest struct {
	// Identity is the node's identity.
	Identity string
	// PublicKey is the node's ed25519 public key in hex, from its ed25519 reply.
	PublicKey string
	// Claims are the helper's server_claims; nil keeps every default.
	Claims *tokens.ServerClaims
	// Configuration is the helper's configuration, whose collectives and
	// plugin.security.provider settings choose the default collectives.
	Configuration map[string]string
}

// Signer signs server JWTs for nodes with jwt_signing_key, chained to jwt_signing_token when set.
type Signer struct {
	validity time.Duration
	reload   Reload
	log      *slog.Logger
	key      *fileCache[signingKey]
	token    *fileCache[*tokens.ClientIDClaims]
}

type signingKey struct {
	private   ed25519.PrivateKey
	publicHex string
}

// NewSigner builds a Signer and reads its key and token once, so a missing or bad file is an
// error at start rather than on the first node.
func NewSigner(cfg SignerConfig) (*Signer, error) {
	if cfg.SigningKey == "" {
		return nil, fmt.Errorf("no jwt signing key configured using jwt_signing_key")
	}
	if cfg.Validity < 0 {
		return nil, fmt.Errorf("server_jwt_validity %v is negative", cfg.Validity)
	}
	if err := cfg.Reload.validate(); err != nil {
		return nil, err
	}

	s := &Signer{
		validity: cfg.Validity,
		reload:   cfg.Reload,
		log:      cfg.Logger,
		key:      newFileCache("jwt_signing_key", cfg.SigningKey, cfg.Reload, parseSeed),
	}
	if s.validity == 0 {
		s.validity = DefaultServerJWTValidity
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if cfg.SigningToken != "" {
		s.token = newFileCache("jwt_signing_token", cfg.SigningToken, cfg.Reload, parseSigningToken)
	}

	if _, _, err := s.credentials(); err != nil {
		return nil, err
	}
	return s, nil
}

// Sign returns the server JWT for req's node, signed with the current jwt_signing_key.
func (s *Signer) Sign(req ServerJWTRequest) (string, error) {
	if req.PublicKey == "" {
		return "", ErrNoNodePublicKey
	}
	pub, err := hex.DecodeString(req.PublicKey)
	if err != nil {
		return "", fmt.Errorf("node ed25519 public key: %w", err)
	}
	if len(pub) != ed25519.PublicKeySize {
		return "", fmt.Errorf("node ed25519 public key is %d bytes, want %d", len(pub), ed25519.PublicKeySize)
	}

	key, chain, err := s.credentials()
	if err != nil {
		return "", err
	}

	now := s.reload.now()
	sc := s.serverSettings(req, now)
	claims, err := tokens.NewServerClaims(req.Identity, sc.collectives, sc.org, sc.permissions, sc.pubSubs, pub, serverJWTIssuer, sc.validity)
	if err != nil {
		return "", fmt.Errorf("server claims for %s: %w", req.Identity, err)
	}
	if err := dateClaims(&claims.StandardClaims, now, sc.validity); err != nil {
		return "", fmt.Errorf("server claims for %s: %w", req.Identity, err)
	}

	if chain != nil {
		if exp := chain.ExpiresAt; exp != nil && !now.Before(exp.Time) {
			return "", fmt.Errorf("jwt_signing_token expired at %s", exp.Time.UTC().Format(time.RFC3339))
		}
		if err := claims.AddChainIssuerData(chain, key.private); err != nil {
			return "", fmt.Errorf("add jwt_signing_token chain issuer data: %w", err)
		}
	}

	signed, err := tokens.SignToken(claims, key.private)
	if err != nil {
		return "", fmt.Errorf("sign server JWT for %s: %w", req.Identity, err)
	}
	return signed, nil
}

// credentials returns the current key and, when configured, the chain token, and checks they
// belong together: a token issued for another key yields server JWTs no server accepts, which
// is what a half-done rotation of the pair looks like.
func (s *Signer) credentials() (signingKey, *tokens.ClientIDClaims, error) {
	key, err := s.key.get()
	if err != nil {
		return signingKey{}, nil, err
	}
	if s.token == nil {
		return key, nil, nil
	}
	chain, err := s.token.get()
	if err != nil {
		return signingKey{}, nil, err
	}
	if chain.PublicKey != key.publicHex {
		return signingKey{}, nil, fmt.Errorf("jwt_signing_token %s was issued for public key %s, not for jwt_signing_key %s (%s)",
			s.token.path, chain.PublicKey, s.key.path, key.publicHex)
	}
	return key, chain, nil
}

// serverSettings are the claims a server JWT gets from the defaults, the helper's
// configuration and the helper's server_claims, in that order of precedence.
type serverSettings struct {
	org         string
	collectives []string
	pubSubs     []string
	permissions *tokens.ServerPermissions
	validity    time.Duration
}

func (s *Signer) serverSettings(req ServerJWTRequest, now time.Time) serverSettings {
	out := serverSettings{org: "choria", collectives: []string{"mcollective"}, validity: s.validity}

	// go-choria defaults to the choria collective when its v2 security provider is in use
	if req.Configuration["plugin.security.provider"] == "choria" {
		out.collectives = []string{"choria"}
	}
	if cc, ok := req.Configuration["collectives"]; ok {
		out.collectives = strings.Split(cc, ",")
	}

	c := req.Claims
	if c == nil {
		return out
	}
	if c.OrganizationUnit != "" {
		out.org = c.OrganizationUnit
	}
	if c.ExpiresAt != nil && !c.ExpiresAt.IsZero() {
		if v := c.ExpiresAt.Sub(now); v > minClaimValidity {
			out.validity = v
		} else {
			s.log.Warn("server_claims expires_at is too soon, using server_jwt_validity",
				"identity", req.Identity, "expires_at", c.ExpiresAt.Time, "validity", s.validity)
		}
	}
	if len(c.Collectives) > 0 {
		out.collectives = c.Collectives
	}
	if len(c.AdditionalPublishSubjects) > 0 {
		out.pubSubs = c.AdditionalPublishSubjects
	}
	if c.Permissions != nil {
		out.permissions = c.Permissions
	}
	return out
}

// dateClaims dates claims from the injected clock: tokens dates them from time.Now. The id stays a
// ksuid of the issue time, which chain verification requires.
func dateClaims(c *tokens.StandardClaims, now time.Time, validity time.Duration) error {
	iat := jwt.NewNumericDate(now.UTC())
	id, err := ksuid.NewRandomWithTime(iat.Time)
	if err != nil {
		return fmt.Errorf("token id: %w", err)
	}
	c.ID = id.String()
	c.IssuedAt = iat
	c.NotBefore = iat
	c.ExpiresAt = jwt.NewNumericDate(iat.Add(validity))
	return nil
}

// parseSeed reads a hex ed25519 seed, as choria.Ed25519KeyPairFromSeedFile does.
func parseSeed(data []byte) (signingKey, error) {
	seed, err := hex.DecodeString(trimmed(data))
	if err != nil {
		// hex's error quotes the offending byte: the seed's content stays out of errors
		return signingKey{}, fmt.Errorf("not a hex ed25519 seed (%d bytes)", len(data))
	}
	pub, pri, err := choria.Ed25519KeyPairFromSeed(seed)
	if err != nil {
		return signingKey{}, fmt.Errorf("ed25519 seed: %w", err)
	}
	return signingKey{private: pri, publicHex: hex.EncodeToString(pub)}, nil
}

// parseSigningToken reads an Organization Issuer's client JWT for the signing key; it is not
// verified here, as the servers that receive the chained JWTs verify it against the issuer.
func parseSigningToken(data []byte) (*tokens.ClientIDClaims, error) {
	t, err := tokens.ParseClientIDTokenUnverified(trimmed(data))
	if err != nil {
		return nil, fmt.Errorf("parse client JWT: %w", err)
	}
	if t.TrustChainSignature == "" {
		return nil, fmt.Errorf("no Trust Chain Signature claim in JWT Signing Token")
	}
	return t, nil
}
