// SPDX-License-Identifier: Apache-2.0

// Package pki holds the sandbox's throwaway certificate authority and its ed25519 provisioning
// JWT signer. Keys are RSA because go-choria's file security provider signs requests with a
// PKCS#1 RSA key.
package pki

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/seed96588659/muster/sandbox/internal/atomicfile"
)

// keyBits is small enough to keep a lab's start quick; the CA is thrown away with the lab.
const keyBits = 2048

// CA is a throwaway certificate authority whose files live in one directory.
type CA struct {
	dir  string
	key  *rsa.PrivateKey
	cert *x509.Certificate
	pem  []byte

	mu     sync.Mutex
	serial int64
	issued map[string]Cert
}

// Cert names the PEM files of one issued certificate and its PKCS#1 RSA key.
type Cert struct {
	Name     string `json:"name"`
	CertFile string `json:"certificate"`
	KeyFile  string `json:"key"`
}

// NewCA creates a CA and writes ca.pem and ca-key.pem into dir.
func NewCA(dir string) (*CA, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create CA dir: %w", err)
	}
	key, err := rsa.GenerateKey(rand.Reader, keyBits)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "Muster Sandbox CA", Organization: []string{"Muster Sandbox"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("self-sign CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse CA: %w", err)
	}
	ca := &CA{dir: dir, key: key, cert: cert, serial: 1, issued: map[string]Cert{}}
	ca.pem = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := atomicfile.Write(ca.CAFile(), ca.pem, 0o644); err != nil {
		return nil, err
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := atomicfile.Write(ca.KeyFile(), keyPEM, 0o600); err != nil {
		return nil, err
	}
	return ca, nil
}

// CAFile is the path of the CA certificate in PEM.
func (c *CA) CAFile() string { return filepath.Join(c.dir, "ca.pem") }

// KeyFile is the path of the CA's PKCS#1 RSA key in PEM, for tools that issue more certificates.
func (c *CA) KeyFile() string { return filepath.Join(c.dir, "ca-key.pem") }

// CAPEM is the CA certificate in PEM.
func (c *CA) CAPEM() []byte { return append([]byte(nil), c.pem...) }

// Pool is a certificate pool holding only this CA.
func (c *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c.cert)
	return p
}

// Issue returns the certificate for name, creating it under dir/<name>/ on first use. The
// certificate is valid for client and server use, for the DNS name name, localhost and 127.0.0.1.
func (c *CA) Issue(name string) (Cert, error) {
	if name == "" {
		return Cert{}, fmt.Errorf("issue certificate: empty name")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if got, ok := c.issued[name]; ok {
		return got, nil
	}
	key, err := rsa.GenerateKey(rand.Reader, keyBits)
	if err != nil {
		return Cert{}, fmt.Errorf("issue %s: generate key: %w", name, err)
	}
	c.serial++
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(c.serial),
		Subject:      pkix.Name{CommonName: name, Organization: []string{"Muster Sandbox"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{name, "localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &key.PublicKey, c.key)
	if err != nil {
		return Cert{}, fmt.Errorf("issue %s: sign: %w", name, err)
	}
	dir := filepath.Join(c.dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Cert{}, fmt.Errorf("issue %s: %w", name, err)
	}
	out := Cert{Name: name, CertFile: filepath.Join(dir, "cert.pem"), KeyFile: filepath.Join(dir, "key.pem")}
	if err := atomicfile.Write(out.CertFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return Cert{}, err
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := atomicfile.Write(out.KeyFile, keyPEM, 0o600); err != nil {
		return Cert{}, err
	}
	c.issued[name] = out
	return out, nil
}

// ClientTLS is a TLS client configuration presenting name's certificate and trusting only this CA.
func (c *CA) ClientTLS(name string) (*tls.Config, error) {
	ct, err := c.Issue(name)
	if err != nil {
		return nil, err
	}
	pair, err := tls.LoadX509KeyPair(ct.CertFile, ct.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("load key pair of %s: %w", name, err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{pair},
		RootCAs:      c.Pool(),
		ServerName:   "localhost",
		MinVersion:   tls.VersionTLS12,
	}, nil
}
