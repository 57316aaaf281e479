// SPDX-License-Identifier: Apache-2.0

package keys_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/choria-io/tokens"
	"github.com/seed96588659/muster/edge/keys"
)

// The host flow signs a node's server JWT with the site's jwt_signing_key once the helper has
// answered; rotating the key file takes effect within Reload.Interval, with no restart.
func ExampleSigner() {
	dir, _ := os.MkdirTemp("", "keys")
	defer os.RemoveAll(dir)
	seed := make([]byte, ed25519.SeedSize)
	_, _ = rand.Read(seed)
	keyFile := filepath.Join(dir, "signer.seed")
	_ = os.WriteFile(keyFile, []byte(hex.EncodeToString(seed)), 0o600)

	signer, err := keys.NewSigner(keys.SignerConfig{
		SigningKey: keyFile,
		Reload:     keys.Reload{Interval: keys.DefaultReloadInterval},
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	nodePub, _, _ := ed25519.GenerateKey(rand.Reader)
	signed, err := signer.Sign(keys.ServerJWTRequest{
		Identity:      "n1.example.net",
		PublicKey:     hex.EncodeToString(nodePub),
		Configuration: map[string]string{"plugin.security.provider": "choria"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	claims, err := tokens.ParseServerToken(signed, ed25519.NewKeyFromSeed(seed).Public())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(claims.ChoriaIdentity, claims.OrganizationUnit, claims.Collectives)
	// Output: n1.example.net choria [choria]
}
