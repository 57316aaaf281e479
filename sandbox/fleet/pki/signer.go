// SPDX-License-Identifier: Apache-2.0

package pki

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/choria-io/tokens"

	"github.com/seed96588659/muster/sandbox/internal/atomicfile"
)

// Signer is the ed25519 key that signs provisioning.jwt; the broker trusts its public key.
type Signer struct {
	pub     ed25519.PublicKey
	pri     ed25519.PrivateKey
	pubFile string
}

// ProvisioningJWT describes the provisioning token a node boots with.
type ProvisioningJWT struct {
	// Token is the provisioning token the node demands of every provision action.
	Token string
	// BrokerURLs are the provisioning brokers the node dials, e.g. nats://127.0.0.1:4222.
	BrokerURLs []string
	// AllowUpdate enables choria_provision#release_update on the node.
	AllowUpdate bool
	// Validity defaults to a day.
	Validity time.Duration
}

// NewSigner creates an ed25519 key pair and writes the hex public key to dir/provisioning-signer.pub
// (the format plugin.choria.network.provisioning.signer_cert accepts) and the hex seed to
// dir/provisioning-signer.seed.
func NewSigner(dir string) (*Signer, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create signer dir: %w", err)
	}
	pub, pri, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate provisioning signer: %w", err)
	}
	s := &Signer{pub: pub, pri: pri, pubFile: filepath.Join(dir, "provisioning-signer.pub")}
	if err := atomicfile.Write(s.pubFile, []byte(hex.EncodeToString(pub)), 0o644); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(filepath.Join(dir, "provisioning-signer.seed"), []byte(hex.EncodeToString(pri.Seed())), 0o600); err != nil {
		return nil, err
	}
	return s, nil
}

// PublicKeyHex is the signer's public key in hex.
func (s *Signer) PublicKeyHex() string { return hex.EncodeToString(s.pub) }

// PublicKeyFile is the file holding the hex public key.
func (s *Signer) PublicKeyFile() string { return s.pubFile }

// Sign returns a signed provisioning JWT. The token is insecure (chs=false) because a node in
// provisioning mode has no CA to verify request signatures with, as with choria-provisioner.
// Provisioning is not on by default (chpd=false): a node is in provisioning mode only while its
// configuration says plugin.choria.server.provision=true, so a configured node that restarts
// leaves provisioning mode whether or not its new configuration names that key.
func (s *Signer) Sign(p ProvisioningJWT) (string, error) {
	if p.Token == "" {
		return "", fmt.Errorf("sign provisioning JWT: empty token")
	}
	if len(p.BrokerURLs) == 0 {
		return "", fmt.Errorf("sign provisioning JWT: no broker URLs")
	}
	if p.Validity == 0 {
		p.Validity = 24 * time.Hour
	}
	claims, err := tokens.NewProvisioningClaims(false, false, p.Token, "", "", p.BrokerURLs, "", "", "", "", "muster-sandbox", p.Validity)
	if err != nil {
		return "", fmt.Errorf("provisioning claims: %w", err)
	}
	claims.AllowUpdate = p.AllowUpdate
	signed, err := tokens.SignToken(claims, s.pri)
	if err != nil {
		return "", fmt.Errorf("sign provisioning JWT: %w", err)
	}
	return signed, nil
}
