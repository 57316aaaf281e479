// SPDX-License-Identifier: Apache-2.0

package keys

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"strings"
	"testing"

	"github.com/choria-io/go-choria/choria"
)

// helperKey is a private key as a helper returns it.
func helperKey(t testing.TB) (string, []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), der
}

func TestEncryptPrivateKey_ServerDecryptsOriginal(t *testing.T) {
	keyPEM, der := helperKey(t)
	serverPri, serverPub, err := choria.ECDHKeyPair()
	if err != nil {
		t.Fatal(err)
	}

	enc, err := EncryptPrivateKey(keyPEM, hex.EncodeToString(serverPub))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(enc.PEM, strings.Split(keyPEM, "\n")[1]) {
		t.Fatal("encrypted PEM carries the key in the clear")
	}

	// what go-choria's provision agent does in configure
	provPub, err := hex.DecodeString(enc.ECDHPublic)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := choria.ECDHSharedSecret(serverPri, provPub)
	if err != nil {
		t.Fatal(err)
	}
	block, rest := pem.Decode([]byte(enc.PEM))
	if block == nil || len(rest) != 0 || block.Type != "RSA PRIVATE KEY" {
		t.Fatalf("encrypted key is not one RSA PRIVATE KEY block: %q", enc.PEM)
	}
	//lint:ignore SA1019 the wire format
	if !x509.IsEncryptedPEMBlock(block) || block.Headers["DEK-Info"][:11] != "AES-256-CBC" { //nolint:staticcheck
		t.Fatalf("headers %v, want AES-256-CBC encryption", block.Headers)
	}
	//lint:ignore SA1019 the wire format
	plain, err := x509.DecryptPEMBlock(block, secret) //nolint:staticcheck
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(plain, der) {
		t.Fatal("decrypted key differs from the helper's")
	}
	if _, err := x509.ParsePKCS8PrivateKey(plain); err != nil {
		t.Fatal(err)
	}

	// another node's secret does not open it
	otherPri, _, err := choria.ECDHKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	wrong, err := choria.ECDHSharedSecret(otherPri, provPub)
	if err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1019 the wire format
	if got, err := x509.DecryptPEMBlock(block, wrong); err == nil && bytes.Equal(got, der) { //nolint:staticcheck
		t.Fatal("another secret decrypts the key")
	}
}

func TestEncryptPrivateKey_FreshExchangePerCall(t *testing.T) {
	keyPEM, _ := helperKey(t)
	_, serverPub, err := choria.ECDHKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	a, err := EncryptPrivateKey(keyPEM, hex.EncodeToString(serverPub))
	if err != nil {
		t.Fatal(err)
	}
	b, err := EncryptPrivateKey(keyPEM, hex.EncodeToString(serverPub))
	if err != nil {
		t.Fatal(err)
	}
	if a.ECDHPublic == b.ECDHPublic || a.PEM == b.PEM {
		t.Fatal("two encryptions share a key pair")
	}
}

func TestEncryptPrivateKey_Errors(t *testing.T) {
	keyPEM, _ := helperKey(t)
	_, serverPub, err := choria.ECDHKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	pub := hex.EncodeToString(serverPub)

	cases := []struct {
		name, key, pub string
		is             error
		want           string
	}{
		{"no key", "", pub, ErrNoKey, "no key to encrypt"},
		{"no exchange", keyPEM, "", ErrNoDiffieHellman, "private key received from helper but server did not start Diffie-Hellman exchange"},
		{"not PEM", "garbage", pub, ErrBadKey, "bad key received"},
		{"public not hex", keyPEM, "zz", nil, "server ecdh_public: encoding/hex"},
		{"public too short", keyPEM, "abcd", nil, "ECDH shared secret with server ecdh_public: "},
		{"low order public", keyPEM, strings.Repeat("00", 32), nil, "ECDH shared secret with server ecdh_public: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			enc, err := EncryptPrivateKey(tc.key, tc.pub)
			if err == nil || enc != (EncryptedKey{}) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("got %+v, %v, want an error starting %q", enc, err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Fatalf("got %v, want %v", err, tc.is)
			}
		})
	}
}

func BenchmarkEncryptPrivateKey(b *testing.B) {
	keyPEM, _ := helperKey(b)
	_, serverPub, err := choria.ECDHKeyPair()
	if err != nil {
		b.Fatal(err)
	}
	pub := hex.EncodeToString(serverPub)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncryptPrivateKey(keyPEM, pub); err != nil {
			b.Fatal(err)
		}
	}
}
