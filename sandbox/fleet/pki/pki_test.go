// SPDX-License-Identifier: Apache-2.0

package pki

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/choria-io/tokens"
)

func TestCA_IssuesPKCS1ClientCertificatesItVerifies(t *testing.T) {
	ca, err := NewCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c, err := ca.Issue("edge-eu-1.mcollective")
	if err != nil {
		t.Fatal(err)
	}
	again, err := ca.Issue("edge-eu-1.mcollective")
	if err != nil || again != c {
		t.Fatalf("second issue of the same name: %+v %v", again, err)
	}
	keyPEM, _ := os.ReadFile(c.KeyFile)
	blk, _ := pem.Decode(keyPEM)
	if blk == nil || blk.Type != "RSA PRIVATE KEY" {
		t.Fatal("key is not a PKCS#1 RSA PEM block")
	}
	if _, err := x509.ParsePKCS1PrivateKey(blk.Bytes); err != nil {
		t.Fatalf("key: %v", err)
	}
	certPEM, _ := os.ReadFile(c.CertFile)
	cb, _ := pem.Decode(certPEM)
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("client use: %v", err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: "localhost"}); err != nil {
		t.Fatalf("server use for localhost: %v", err)
	}
	other, err := NewCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: other.Pool()}); err == nil {
		t.Fatal("certificate verified against another CA")
	}
	if _, err := ca.Issue(""); err == nil {
		t.Fatal("empty name issued")
	}
}

func TestSigner_ProvisioningJWTVerifiesWithPublicKeyFile(t *testing.T) {
	dir := t.TempDir()
	s, err := NewSigner(dir)
	if err != nil {
		t.Fatal(err)
	}
	token, err := s.Sign(ProvisioningJWT{Token: "s3cret", BrokerURLs: []string{"nats://127.0.0.1:4222"}, AllowUpdate: true, Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	claims, err := tokens.ParseProvisioningTokenWithKeyfile(token, s.PublicKeyFile())
	if err != nil {
		t.Fatalf("broker-style verification: %v", err)
	}
	if claims.Token != "s3cret" || claims.URLs != "nats://127.0.0.1:4222" || !claims.AllowUpdate || claims.ProvDefault || claims.Secure {
		t.Fatalf("claims %+v", claims)
	}
	pub, _ := hex.DecodeString(s.PublicKeyHex())
	other, _, _ := ed25519.GenerateKey(nil)
	if _, err := tokens.ParseProvisioningToken(token, other); err == nil {
		t.Fatal("token verified with another key")
	}
	if _, err := tokens.ParseProvisioningToken(token, ed25519.PublicKey(pub)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sign(ProvisioningJWT{BrokerURLs: []string{"x"}}); err == nil {
		t.Fatal("empty token signed")
	}
	if _, err := os.Stat(filepath.Join(dir, "provisioning-signer.seed")); err != nil {
		t.Fatal(err)
	}
}
