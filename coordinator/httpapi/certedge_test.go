// SPDX-License-Identifier: Apache-2.0

package httpapi_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/httpapi"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// edgeCall is one edge request sent straight to a member over TLS: the client's certificate (if
// any), a bearer token (if any) and the forwarded header (if any) are what the member judges.
type edgeCall struct {
	hc        *http.Client
	token     string
	forwarded string
}

// register asks to register identity for edge in region and returns the answer's status and body.
func (c edgeCall) register(t *testing.T, srv *httptest.Server, edge, region, identity string) (int, string) {
	t.Helper()
	body, _ := json.Marshal(api.RegisterRequest{Region: region, Edge: edge, Nodes: []api.RegisterNode{{Identity: identity}}})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+api.PathRegister, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.forwarded != "" {
		req.Header.Set(api.HeaderForwarded, c.forwarded)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b)
}

// absent fails the test when the ledger holds identity: a refused request changes nothing.
func absent(t *testing.T, m *member, identity string) {
	t.Helper()
	if n, err := m.svc.Node(ctxT(t), identity); err == nil {
		t.Errorf("refused request applied anyway: node %s is in the ledger (%+v)", identity, n)
	}
}

// memberProof is the forward proof a member with adminToken sends (member.go).
func memberProof() string {
	mac := hmac.New(sha256.New, []byte(adminToken))
	mac.Write([]byte("muster forwarded request v1"))
	return hex.EncodeToString(mac.Sum(nil))
}

const usToken = "token-of-edge-us-1-0123456789"

// tokenEdges binds edge-eu-1's token to eu and edge-us-1's to us, and no certificate.
func tokenEdges() []httpapi.EdgeCredential {
	return []httpapi.EdgeCredential{{Token: eu1Token, Edge: "edge-eu-1", Regions: []string{"eu"}}, {Token: usToken, Edge: "edge-us-1", Regions: []string{"us"}}}
}

// TestCertBinding_AReadersCertificateActsAsNoEdgeBesideBoundTokens is issue 32's finding 2 as
// the status page's holder would try it: edges are bound by token, client certificates are on,
// and the status page's read-only certificate (and any other of the CA bound to no edge)
// registers nodes as the us edge in us. Once any edge is bound, such a certificate acts as no
// edge; a reader's certificate never does, even where no edge is bound at all.
func TestCertBinding_AReadersCertificateActsAsNoEdgeBesideBoundTokens(t *testing.T) {
	for _, c := range []struct {
		name  string
		cfg   httpapi.Config
		cn    string
		wants string
	}{
		{"the status page's certificate, edges bound by token", httpapi.Config{Edges: tokenEdges()}, "alice-statuspage", "certificate alice-statuspage"},
		{"another certificate of the CA, edges bound by token", httpapi.Config{Edges: tokenEdges()}, "build-runner", "certificate build-runner is bound to no edge"},
		{"the status page's certificate, no edge bound", httpapi.Config{EdgeTokens: []string{edgeToken}}, "alice-statuspage", "certificate alice-statuspage"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.ClientCerts, cfg.Readers, cfg.AdminTokens, cfg.Errors = true, []string{"alice-statuspage"}, []string{adminToken}, coordinator.HTTPErrors()
			m, ca, srv := tlsMember(t, cfg)
			call := edgeCall{hc: ca.Client(ca.IssueClient(t, c.cn))}
			code, b := call.register(t, srv, "edge-us-1", "us", "us-spoofed-1")
			if code != http.StatusForbidden || !strings.Contains(b, string(api.CodeWrongEdge)) || !strings.Contains(b, c.wants) {
				t.Errorf("register in us as edge-us-1 with %s's certificate: %d %s, want 403 %s naming %q", c.cn, code, b, api.CodeWrongEdge, c.wants)
			}
			absent(t, m, "us-spoofed-1")
			// It still reads, which is all the status page needs.
			if c.cn == "alice-statuspage" {
				resp, err := call.hc.Get(srv.URL + api.PathStatus)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("status with the reader's certificate: %d, want 200", resp.StatusCode)
				}
			}
		})
	}
}

// TestCertBinding_ABoundTokenIsNotWidenedByACertificate is issue 32's finding 2 as an edge
// would try it: edge-eu-1's token is bound to eu, and its client also presents a certificate of
// the CA. It registers in eu and nowhere else, whether edges are bound by token only or some by
// certificate too. A certificate bound to another edge does not let the token act as that edge,
// nor the token the certificate (both credentials must agree); a wrong token is refused whatever
// certificate comes with it. A member's forward of the token (member certificate and proof)
// keeps the token's binding.
func TestCertBinding_ABoundTokenIsNotWidenedByACertificate(t *testing.T) {
	for _, setup := range []struct {
		name  string
		edges []httpapi.EdgeCredential
	}{
		{"edges bound by token only", tokenEdges()},
		{"one edge bound by certificate", append(tokenEdges(), httpapi.EdgeCredential{Edge: "edge-ap-1", Regions: []string{"ap"}})},
	} {
		t.Run(setup.name, func(t *testing.T) {
			cfg := httpapi.Config{ClientCerts: true, AdminTokens: []string{adminToken}, Errors: coordinator.HTTPErrors(), MemberName: testkit.MemberName, Edges: setup.edges}
			m, ca, srv := tlsMember(t, cfg)
			euCert, apCert := ca.Client(ca.IssueClient(t, "edge-eu-1")), ca.Client(ca.IssueClient(t, "edge-ap-1"))
			member := ca.Client(ca.IssueMember(t, "c2"))
			type try struct {
				name                   string
				call                   edgeCall
				edge, region, identity string
				status                 int
				wants                  string
			}
			tries := []try{
				{"eu token with a certificate of the CA, in eu", edgeCall{hc: euCert, token: eu1Token}, "edge-eu-1", "eu", "eu-1", http.StatusOK, ""},
				{"eu token with a certificate of the CA, in us as edge-us-1", edgeCall{hc: euCert, token: eu1Token}, "edge-us-1", "us", "us-spoofed-1", http.StatusForbidden, "bound to edge edge-eu-1"},
				{"eu token with a certificate of the CA, in us as edge-eu-1", edgeCall{hc: euCert, token: eu1Token}, "edge-eu-1", "us", "us-spoofed-2", http.StatusForbidden, `region \"us\"`},
				{"a member's forward of the eu token, in us", edgeCall{hc: member, token: eu1Token, forwarded: memberProof()}, "edge-us-1", "us", "us-spoofed-3", http.StatusForbidden, "bound to edge edge-eu-1"},
				{"a member's forward of the eu token, in eu", edgeCall{hc: member, token: eu1Token, forwarded: memberProof()}, "edge-eu-1", "eu", "eu-2", http.StatusOK, ""},
			}
			if len(setup.edges) > 2 {
				tries = append(tries,
					try{"eu token with edge-ap-1's certificate, as edge-ap-1", edgeCall{hc: apCert, token: eu1Token}, "edge-ap-1", "ap", "ap-spoofed-1", http.StatusForbidden, "edge-ap-1"},
					try{"eu token with edge-ap-1's certificate, as edge-eu-1", edgeCall{hc: apCert, token: eu1Token}, "edge-eu-1", "eu", "eu-spoofed-1", http.StatusForbidden, "edge-ap-1"},
					try{"a wrong token with edge-ap-1's certificate", edgeCall{hc: apCert, token: "not-a-token-of-anyone-0123456789"}, "edge-ap-1", "ap", "ap-spoofed-2", http.StatusUnauthorized, "not a valid edge token"},
				)
			}
			for _, c := range tries {
				code, b := c.call.register(t, srv, c.edge, c.region, c.identity)
				if code != c.status || !strings.Contains(b, c.wants) {
					t.Errorf("%s: %d %s, want %d naming %q", c.name, code, b, c.status, c.wants)
				}
				if c.status != http.StatusOK {
					absent(t, m, c.identity)
				}
			}
		})
	}
}

// TestCertBinding_EdgesBoundByCertificateKeepWorking: edges bound by their certificates, beside
// one bound by token, act as themselves in their regions (alone, with a legacy unbound token, or
// forwarded by a member), and only there.
func TestCertBinding_EdgesBoundByCertificateKeepWorking(t *testing.T) {
	cfg := httpapi.Config{ClientCerts: true, AdminTokens: []string{adminToken}, Errors: coordinator.HTTPErrors(), MemberName: testkit.MemberName,
		EdgeTokens: []string{edgeToken},
		Edges:      []httpapi.EdgeCredential{{Edge: "edge-eu-1", Regions: []string{"eu"}}, {Edge: "edge-us-1", Regions: []string{"us", "ca"}}, {Token: usToken, Edge: "edge-ap-1", Regions: []string{"ap"}}}}
	m, ca, srv := tlsMember(t, cfg)
	eu, us := ca.Client(ca.IssueClient(t, "edge-eu-1")), ca.Client(ca.IssueClient(t, "edge-us-1"))
	member := ca.Client(ca.IssueMember(t, "c2"))
	for _, c := range []struct {
		name                   string
		call                   edgeCall
		edge, region, identity string
		status                 int
	}{
		{"edge-eu-1's certificate in eu", edgeCall{hc: eu}, "edge-eu-1", "eu", "eu-1", http.StatusOK},
		{"edge-us-1's certificate in us", edgeCall{hc: us}, "edge-us-1", "us", "us-1", http.StatusOK},
		{"edge-us-1's certificate in ca", edgeCall{hc: us}, "edge-us-1", "ca", "ca-1", http.StatusOK},
		{"edge-eu-1's certificate with the unbound token", edgeCall{hc: eu, token: edgeToken}, "edge-eu-1", "eu", "eu-2", http.StatusOK},
		{"a member's forward for edge-eu-1", edgeCall{hc: member, forwarded: memberProof()}, "edge-eu-1", "eu", "eu-3", http.StatusOK},
		{"edge-eu-1's certificate in us", edgeCall{hc: eu}, "edge-eu-1", "us", "us-spoofed-1", http.StatusForbidden},
		{"edge-eu-1's certificate as edge-us-1", edgeCall{hc: eu}, "edge-us-1", "us", "us-spoofed-2", http.StatusForbidden},
		{"edge-eu-1's certificate with the unbound token, as edge-us-1", edgeCall{hc: eu, token: edgeToken}, "edge-us-1", "us", "us-spoofed-3", http.StatusForbidden},
	} {
		code, b := c.call.register(t, srv, c.edge, c.region, c.identity)
		if code != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, code, b, c.status)
		}
		if c.status != http.StatusOK {
			absent(t, m, c.identity)
		}
	}
}
