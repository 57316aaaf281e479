// SPDX-License-Identifier: Apache-2.0

package keys

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/choria-io/tokens"

	"github.com/seed96588659/muster/pkg/testkit"
)

// newFakeClock is a settable clock a minute before the real time, so that tokens' own checks
// against time.Now (not before, expiry) accept what it dates, after a few advances too.
func newFakeClock() *testkit.Clock {
	return testkit.NewClock(time.Now().Add(-time.Minute).Truncate(time.Second))
}

// edKey is an ed25519 key pair with its seed.
type edKey struct {
	seed []byte
	pub  ed25519.PublicKey
	pri  ed25519.PrivateKey
}

func newEdKey(t testing.TB) edKey {
	t.Helper()
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		t.Fatal(err)
	}
	pri := ed25519.NewKeyFromSeed(seed)
	return edKey{seed: seed, pub: pri.Public().(ed25519.PublicKey), pri: pri}
}

func (k edKey) pubHex() string { return hex.EncodeToString(k.pub) }

// writeFile replaces path by renaming a complete new file over it, as a rotation should.
func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func writeSeed(t testing.TB, path string, k edKey) {
	t.Helper()
	writeFile(t, path, []byte(hex.EncodeToString(k.seed)))
}

// chainToken is a client JWT the Organization Issuer org issued for signer's public key, the
// jwt_signing_token of a provisioner in org's trust chain.
func chainToken(t testing.TB, org, signer edKey, validity time.Duration) (string, *tokens.ClientIDClaims) {
	t.Helper()
	c, err := tokens.NewClientIDClaims("provisioner", nil, "choria", nil, "", "", validity, &tokens.ClientPermissions{ServerProvisioner: true}, signer.pub)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddOrgIssuerData(org.pri); err != nil {
		t.Fatal(err)
	}
	signed, err := tokens.SignToken(c, org.pri)
	if err != nil {
		t.Fatal(err)
	}
	return signed, c
}

// provisioningJWT is a provisioning token signed by pk.
func provisioningJWT(t testing.TB, pk any, secure bool, validity time.Duration) string {
	t.Helper()
	c, err := tokens.NewProvisioningClaims(secure, true, "s3cret", "", "", []string{"nats://127.0.0.1:4222"}, "", "", "", "", "test", validity)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := tokens.SignToken(c, pk)
	if err != nil {
		t.Fatal(err)
	}
	return signed
}

func tempPath(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(t.TempDir(), name)
}

func seedFile(t testing.TB, k edKey) string {
	t.Helper()
	path := tempPath(t, "signer.seed")
	writeSeed(t, path, k)
	return path
}
