// SPDX-License-Identifier: Apache-2.0

package keys

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/testkit"
)

func TestJWTVerifier_NoJWT(t *testing.T) {
	v, err := NewJWTVerifier(newEdKey(t).pubHex(), Reload{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Validate(""); !errors.Is(err, ErrNoJWT) || err.Error() != "no JWT received" {
		t.Fatalf("got %v, want %v", err, ErrNoJWT)
	}
}

func TestJWTVerifier_NoVerifyCertFailsEveryJWT(t *testing.T) {
	v, err := NewJWTVerifier("", Reload{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Validate(provisioningJWT(t, newEdKey(t).pri, true, time.Hour))
	if !errors.Is(err, ErrNoVerifyCert) || err.Error() != "no JWT verification certificate configured, cannot validate JWT" {
		t.Fatalf("got %v, want %v", err, ErrNoVerifyCert)
	}
}

func TestJWTVerifier_HexKeyInline(t *testing.T) {
	k := newEdKey(t)
	v, err := NewJWTVerifier(k.pubHex(), Reload{})
	if err != nil {
		t.Fatal(err)
	}
	for _, secure := range []bool{true, false} {
		claims, err := v.Validate(provisioningJWT(t, k.pri, secure, time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if claims.Secure != secure {
			t.Errorf("Secure (chs) = %v, want %v", claims.Secure, secure)
		}
		if claims.Token != "s3cret" || claims.OrganizationUnit != "choria" {
			t.Errorf("claims = %+v", claims)
		}
	}
}

func TestJWTVerifier_KeyFiles(t *testing.T) {
	ed := newEdKey(t)
	edPKIX, err := x509.MarshalPKIXPublicKey(ed.pub)
	if err != nil {
		t.Fatal(err)
	}
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rsaPKIX, err := x509.MarshalPKIXPublicKey(&rk.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	rsaCert := testkit.SelfSigned(t, rk, "provisioning signer").Raw

	cases := []struct {
		name   string
		file   []byte
		signer any
	}{
		{"ed25519 hex with newline", []byte(ed.pubHex() + "\n"), ed.pri},
		{"ed25519 PEM public key", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: edPKIX}), ed.pri},
		{"RSA PEM public key", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: rsaPKIX}), rk},
		{"RSA PKCS1 public key", pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(&rk.PublicKey)}), rk},
		{"RSA certificate", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rsaCert}), rk},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := tempPath(t, "verify.pem")
			writeFile(t, path, tc.file)
			v, err := NewJWTVerifier(path, Reload{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := v.Validate(provisioningJWT(t, tc.signer, true, time.Hour)); err != nil {
				t.Fatalf("valid JWT: %v", err)
			}
			_, err = v.Validate(provisioningJWT(t, newEdKey(t).pri, true, time.Hour))
			if err == nil || !strings.HasPrefix(err.Error(), "invalid provisioning JWT: ") {
				t.Fatalf("JWT of another signer: got %v", err)
			}
		})
	}
}

func TestJWTVerifier_RejectsBadTokens(t *testing.T) {
	k := newEdKey(t)
	v, err := NewJWTVerifier(k.pubHex(), Reload{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSigner(SignerConfig{SigningKey: seedFile(t, k)})
	if err != nil {
		t.Fatal(err)
	}
	server, err := s.Sign(ServerJWTRequest{Identity: "n1.example.net", PublicKey: newEdKey(t).pubHex()})
	if err != nil {
		t.Fatal(err)
	}

	cases := map[string]string{
		"other signer": provisioningJWT(t, newEdKey(t).pri, true, time.Hour),
		"expired":      provisioningJWT(t, k.pri, true, -time.Minute),
		"server JWT":   server,
		"garbage":      "not.a.jwt",
	}
	for name, raw := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := v.Validate(raw)
			if err == nil || c != nil || !strings.HasPrefix(err.Error(), "invalid provisioning JWT: ") {
				t.Fatalf("got %v, %v", c, err)
			}
		})
	}
}

func TestNewJWTVerifier_BadCert(t *testing.T) {
	garbage := tempPath(t, "verify.pem")
	writeFile(t, garbage, []byte("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"))
	key := tempPath(t, "key.pem")
	writeFile(t, key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1}}))

	cases := []struct{ cert, want string }{
		{"/nonexistent/verify.pem", "neither an existing file nor a hex ed25519 public key"},
		{"abcd", "ed25519 public key is 2 bytes, want 32"},
		{garbage, "jwt_verify_cert " + garbage + ": parse public key"},
		{key, `PEM block "PRIVATE KEY" holds no public key`},
	}
	for _, tc := range cases {
		if _, err := NewJWTVerifier(tc.cert, Reload{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewJWTVerifier(%q) = %v, want an error with %q", tc.cert, err, tc.want)
		}
	}
	if _, err := NewJWTVerifier("abcd", Reload{Interval: -1}); err == nil {
		t.Error("negative reload interval accepted")
	}
}

func TestJWTVerifier_RotatedCertUsedWithoutRestart(t *testing.T) {
	oldKey, newKey := newEdKey(t), newEdKey(t)
	path := tempPath(t, "verify.pub")
	writeFile(t, path, []byte(oldKey.pubHex()))
	v, err := NewJWTVerifier(path, Reload{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Validate(provisioningJWT(t, oldKey.pri, true, time.Hour)); err != nil {
		t.Fatal(err)
	}

	writeFile(t, path, []byte(newKey.pubHex()))
	if _, err := v.Validate(provisioningJWT(t, newKey.pri, true, time.Hour)); err != nil {
		t.Fatalf("JWT of the rotated-in key: %v", err)
	}
	if _, err := v.Validate(provisioningJWT(t, oldKey.pri, true, time.Hour)); err == nil {
		t.Fatal("JWT of the rotated-out key still valid")
	}
}

func BenchmarkJWTVerifier_Validate(b *testing.B) {
	k := newEdKey(b)
	path := tempPath(b, "verify.pub")
	writeFile(b, path, []byte(k.pubHex()))
	v, err := NewJWTVerifier(path, Reload{Interval: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	raw := provisioningJWT(b, k.pri, true, time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Validate(raw); err != nil {
			b.Fatal(err)
		}
	}
}
