// SPDX-License-Identifier: Apache-2.0

package httpapi_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/httpapi"
	"github.com/seed96588659/muster/pkg/api"
)

// testCA issues certificates for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

func (ca *testCA) issue(t *testing.T, cn string, usage x509.ExtKeyUsage) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func tlsClient(t *testing.T, roots *x509.CertPool, certs ...tls.Certificate) *http.Client {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: roots, Certificates: certs, MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: tr}
}

// TestTLS_ClientCertificateOpensTheEdgeAPIButNotTheAdminAPI serves a real member over TLS with
// client certificates verified against a CA.
func TestTLS_ClientCertificateOpensTheEdgeAPIButNotTheAdminAPI(t *testing.T) {
	m := cluster(t, 1)[0]
	ca := newCA(t, "muster test CA")
	h, err := httpapi.New(m.svc, httpapi.Config{ClientCerts: true, AdminTokens: []string{adminToken}, Errors: httpapi.CoreErrors()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{ca.issue(t, "coordinator", x509.ExtKeyUsageServerAuth)},
		ClientCAs:    ca.pool, ClientAuth: tls.VerifyClientCertIfGiven, MinVersion: tls.VersionTLS12,
	}
	srv.StartTLS()
	defer srv.Close()
	ctx := ctxT(t)
	reg := api.RegisterRequest{Region: "ams", Edge: "edge-1", Nodes: []api.RegisterNode{{Identity: "tls-1"}}}

	withCert := tlsClient(t, ca.pool, ca.issue(t, "edge-1", x509.ExtKeyUsageClientAuth))
	c, err := api.NewClient([]string{srv.URL}, api.WithHTTPClient(withCert))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := c.Register(ctx, reg); err != nil || r.Added != 1 {
		t.Fatalf("register with a client certificate: %+v %v", r, err)
	}
	if _, err := c.Status(ctx); !api.IsCode(err, api.CodeUnauthorized) {
		t.Fatalf("status with a client certificate only: %v, want unauthorized", err)
	}

	without, _ := api.NewClient([]string{srv.URL}, api.WithHTTPClient(tlsClient(t, ca.pool)), api.WithAttempts(1))
	if _, err := without.Register(ctx, reg); !api.IsCode(err, api.CodeUnauthorized) {
		t.Fatalf("register without a certificate: %v, want unauthorized", err)
	}

	stranger := newCA(t, "someone else's CA")
	foreign, _ := api.NewClient([]string{srv.URL}, api.WithHTTPClient(tlsClient(t, ca.pool, stranger.issue(t, "edge-1", x509.ExtKeyUsageClientAuth))), api.WithAttempts(1))
	if _, err := foreign.Register(ctx, reg); err == nil {
		t.Fatal("a certificate from another CA was accepted")
	}
	if n, err := m.svc.Node(ctx, "tls-1"); err != nil || n.Region != "ams" {
		t.Fatalf("node tls-1: %+v %v", n, err)
	}
}

func TestNew_RefusesAnEdgeAPIOpenToNobody(t *testing.T) {
	// New only keeps the service, so an unopened one is enough here.
	svc := &coordinator.Service{}
	if _, err := httpapi.New(svc, httpapi.Config{AdminTokens: []string{adminToken}}); err == nil {
		t.Fatal("a server without any edge credential was built")
	}
	if _, err := httpapi.New(svc, httpapi.Config{EdgeTokens: []string{""}}); err == nil {
		t.Fatal("an empty edge token was accepted")
	}
}
