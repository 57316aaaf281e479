// SPDX-License-Identifier: Apache-2.0

package testkit

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a throwaway certificate authority for one test; what it issues is valid for 127.0.0.1.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// Pool trusts the CA alone.
	Pool *x509.CertPool
}

// NewCA makes a CA named name.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := NewKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: serial(t), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	cert := create(t, tmpl, tmpl, &key.PublicKey, key)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &CA{cert: cert, key: key, Pool: pool}
}

// Cert is the CA's own certificate.
func (ca *CA) Cert() *x509.Certificate { return ca.cert }

// MemberName is the DNS name a coordinator member's certificate carries in the tests
// (tls.member_name's default).
const MemberName = "member.muster"

// Issue returns a certificate for 127.0.0.1 named cn with the given extended key usages.
func (ca *CA) Issue(t testing.TB, cn string, usage ...x509.ExtKeyUsage) tls.Certificate {
	return ca.issue(t, cn, nil, usage...)
}

func (ca *CA) issue(t testing.TB, cn string, dnsNames []string, usage ...x509.ExtKeyUsage) tls.Certificate {
	t.Helper()
	key := NewKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: serial(t), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: usage,
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: dnsNames,
	}
	cert := create(t, tmpl, ca.cert, &key.PublicKey, ca.key)
	return tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key}
}

// IssueMember returns a certificate a member presents both as server and as client: it carries
// the member name.
func (ca *CA) IssueMember(t testing.TB, cn string) tls.Certificate {
	return ca.issue(t, cn, []string{MemberName}, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
}

// IssueClient returns a certificate of the cluster's CA that is not a member's (an edge's, the
// status page's): client and server use, no member name.
func (ca *CA) IssueClient(t testing.TB, cn string) tls.Certificate {
	return ca.Issue(t, cn, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
}

// MutualTLS is a member's configuration for a transport where both ends verify the other.
func (ca *CA) MutualTLS(t testing.TB, cn string) *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{ca.IssueMember(t, cn)},
		RootCAs:      ca.Pool, ClientCAs: ca.Pool, ClientAuth: tls.RequireAndVerifyClientCert,
		MinVersion: tls.VersionTLS13,
	}
}

// Client is an HTTP client that trusts the CA and presents certs.
func (ca *CA) Client(certs ...tls.Certificate) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: ca.Pool, Certificates: certs, MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: tr}
}

// WriteCA writes the CA certificate as dir/ca.pem and returns its path.
func (ca *CA) WriteCA(t testing.TB, dir string) string {
	t.Helper()
	return WritePEM(t, filepath.Join(dir, "ca.pem"), "CERTIFICATE", ca.cert.Raw)
}

// WriteKey writes the CA's private key as dir/ca-key.pem and returns its path, for a signer
// under test that issues with this CA.
func (ca *CA) WriteKey(t testing.TB, dir string) string {
	t.Helper()
	return WritePEM(t, filepath.Join(dir, "ca-key.pem"), "EC PRIVATE KEY", marshalEC(t, ca.key))
}

// WriteCert writes c as dir/name.pem and its key as dir/name.key.
func WriteCert(t testing.TB, dir, name string, c tls.Certificate) (certPath, keyPath string) {
	t.Helper()
	return WritePEM(t, filepath.Join(dir, name+".pem"), "CERTIFICATE", c.Certificate[0]),
		WritePEM(t, filepath.Join(dir, name+".key"), "EC PRIVATE KEY", marshalEC(t, c.PrivateKey.(*ecdsa.PrivateKey)))
}

// SelfSigned is a certificate named cn (and dns) signed by key itself: a caller's or a node's
// certificate where no chain is checked. It is valid from an hour ago for a day.
func SelfSigned(t testing.TB, key crypto.Signer, cn string, dns ...string) *x509.Certificate {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: serial(t), Subject: pkix.Name{CommonName: cn}, DNSNames: dns,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
	}
	return create(t, tmpl, tmpl, key.Public(), key)
}

// WritePEM writes der as one PEM block of typ at path, readable by the owner only, and returns
// path.
func WritePEM(t testing.TB, path, typ string, der []byte) string {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func create(t testing.TB, tmpl, parent *x509.Certificate, pub, signer any) *x509.Certificate {
	t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		t.Fatalf("create certificate %s: %v", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("parse certificate %s: %v", tmpl.Subject.CommonName, err)
	}
	return cert
}

func marshalEC(t testing.TB, key *ecdsa.PrivateKey) []byte {
	t.Helper()
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// NewKey is a fresh P-256 key, a node's or a caller's.
func NewKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// serial is random so that two certificates issued in the same instant still differ.
func serial(t testing.TB) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// CSR is a certificate request for cn (and dns) as a node's csr reply carries it, in PEM, with
// the node's new key.
func CSR(t testing.TB, cn string, dns ...string) (*ecdsa.PrivateKey, string) {
	t.Helper()
	key := NewKey(t)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn}, DNSNames: dns}, key)
	if err != nil {
		t.Fatalf("certificate request %s: %v", cn, err)
	}
	return key, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}
