// SPDX-License-Identifier: Apache-2.0

package httpapi_test

import (
	"crypto/tls"
	"crypto/x509"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/httpapi"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// TestTLS_ClientCertificateOpensTheEdgeAPIButNotTheAdminAPI serves a real member over TLS with
// client certificates verified against a CA.
func TestTLS_ClientCertificateOpensTheEdgeAPIButNotTheAdminAPI(t *testing.T) {
	m, ca, srv := tlsMember(t, httpapi.Config{ClientCerts: true, AdminTokens: []string{adminToken}, Errors: coordinator.HTTPErrors()})
	ctx := ctxT(t)
	reg := api.RegisterRequest{Region: "ams", Edge: "edge-1", Nodes: []api.RegisterNode{{Identity: "tls-1"}}}

	withCert := ca.Client(ca.Issue(t, "edge-1", x509.ExtKeyUsageClientAuth))
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

	without, _ := api.NewClient([]string{srv.URL}, api.WithHTTPClient(ca.Client()), api.WithAttempts(1))
	if _, err := without.Register(ctx, reg); !api.IsCode(err, api.CodeUnauthorized) {
		t.Fatalf("register without a certificate: %v, want unauthorized", err)
	}

	stranger := testkit.NewCA(t, "someone else's CA")
	foreign, _ := api.NewClient([]string{srv.URL}, api.WithHTTPClient(ca.Client(stranger.Issue(t, "edge-1", x509.ExtKeyUsageClientAuth))), api.WithAttempts(1))
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
	if _, err := httpapi.New(svc, httpapi.Config{AdminTokens: []string{adminToken}, Errors: coordinator.HTTPErrors()}); err == nil {
		t.Fatal("a server without any edge credential was built")
	}
	if _, err := httpapi.New(svc, httpapi.Config{EdgeTokens: []string{""}, Errors: coordinator.HTTPErrors()}); err == nil {
		t.Fatal("an empty edge token was accepted")
	}
}

// Without the member's error table every refusal would read as a server fault (500).
func TestNew_RefusesAServerWithoutAnErrorTable(t *testing.T) {
	svc := &coordinator.Service{}
	if _, err := httpapi.New(svc, httpapi.Config{EdgeTokens: []string{"edge-token"}}); err == nil || !strings.Contains(err.Error(), "error mapping") {
		t.Fatalf("a server without an error table: %v", err)
	}
}

// tlsMember serves one member's API with cfg over TLS, verifying client certificates against a
// new CA; the server is closed with the test.
func tlsMember(t *testing.T, cfg httpapi.Config) (*member, *testkit.CA, *httptest.Server) {
	t.Helper()
	m := cluster(t, 1)[0]
	ca := testkit.NewCA(t, "muster test CA")
	h, err := httpapi.New(m.svc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{ca.Issue(t, "coordinator", x509.ExtKeyUsageServerAuth)},
		ClientCAs:    ca.Pool, ClientAuth: tls.VerifyClientCertIfGiven, MinVersion: tls.VersionTLS12,
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return m, ca, srv
}
