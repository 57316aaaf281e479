// SPDX-License-Identifier: Apache-2.0

package httpapi_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/httpapi"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// TestReadCerts_AClientCertificateOpensTheAdminReadsOnly is the status page's certificate log-in:
// a certificate named in Readers reads status, nodes and a node, but may not pause (403: it has
// role read); an edge's
// certificate does not read even when named there.
func TestReadCerts_AClientCertificateOpensTheAdminReadsOnly(t *testing.T) {
	m, ca, srv := tlsMember(t, httpapi.Config{ClientCerts: true, Readers: []string{"operator", "edge-1"}, AdminTokens: []string{adminToken}, Errors: coordinator.HTTPErrors(),
		Edges: []httpapi.EdgeCredential{{Edge: "edge-1", Regions: []string{"ams"}}}})
	ctx := ctxT(t)

	// Straight to this server: api.Client would follow the leader header to the member's own
	// plain listener.
	hc := ca.Client(ca.Issue(t, "operator", x509.ExtKeyUsageClientAuth))
	if _, err := m.svc.Register(ctx, api.RegisterRequest{Region: "ams", Edge: "edge-1", Nodes: []api.RegisterNode{{Identity: "rc-1"}}}); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{
		api.PathStatus:          http.StatusOK,
		api.PathNodes:           http.StatusOK,
		api.PathNode + "rc-1":   http.StatusOK,
		api.PathNode + "nobody": http.StatusNotFound,
	} {
		resp, err := hc.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s with a client certificate: %d %s, want %d", path, resp.StatusCode, b, want)
		}
		if want == http.StatusOK && path != api.PathStatus && !strings.Contains(string(b), "rc-1") {
			t.Errorf("GET %s: %s lacks rc-1", path, b)
		}
	}
	resp, err := hc.Post(srv.URL+api.PathPause, "application/json", strings.NewReader(`{"reason":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "needs role operate; operator has role read") {
		t.Fatalf("pause with a reader's certificate: %d %s, want 403 naming the role it needs and the reader's", resp.StatusCode, b)
	}
	// An edge's certificate is no operator's: it does not open the ledger.
	edge := ca.Client(ca.Issue(t, "edge-1", x509.ExtKeyUsageClientAuth))
	resp, err = edge.Get(srv.URL + api.PathNodes)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("nodes with an edge's certificate: %d, want 401", resp.StatusCode)
	}
	without, _ := api.NewClient([]string{srv.URL}, api.WithHTTPClient(ca.Client()), api.WithAttempts(1))
	if _, err := without.Status(ctx); !api.IsCode(err, api.CodeUnauthorized) {
		t.Fatalf("status without certificate or token: %v, want unauthorized", err)
	}
}

// TestCertBinding_TheForwardedHeaderAloneActsAsNoEdge: with edge certificates bound, a verified
// certificate bound to no edge (an operator's status-page certificate) is refused as an edge,
// and setting the forwarded header itself does not change that: only a member's forward carries
// the proof the leader accepts (derived from the admin token).
func TestCertBinding_TheForwardedHeaderAloneActsAsNoEdge(t *testing.T) {
	m, ca, srv := tlsMember(t, httpapi.Config{ClientCerts: true, Readers: []string{"alice-statuspage"}, AdminTokens: []string{adminToken}, Errors: coordinator.HTTPErrors(),
		Edges: []httpapi.EdgeCredential{{Edge: "edge-1", Regions: []string{"ams"}}}})
	operator := ca.Client(ca.Issue(t, "alice-statuspage", x509.ExtKeyUsageClientAuth))
	for _, forwarded := range []string{"", "1", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+api.PathRegister, strings.NewReader(`{"region":"ams","edge":"edge-1","nodes":[{"identity":"spoofed-1"}]}`))
		req.Header.Set("Content-Type", "application/json")
		if forwarded != "" {
			req.Header.Set(api.HeaderForwarded, forwarded)
		}
		resp, err := operator.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "certificate alice-statuspage is bound to no edge") {
			t.Errorf("register as edge-1 with an unbound certificate, forwarded header %q: %d %s, want 403 naming the certificate", forwarded, resp.StatusCode, b)
		}
	}
	if n, err := m.svc.Node(ctxT(t), "spoofed-1"); err == nil {
		t.Fatalf("the spoofed register was applied: %+v", n)
	}
}

// TestCertBinding_AForwardNeedsAMembersCertificate: the forward proof lets an unbound certificate
// act as any edge only when that certificate carries the member name; an edge's or the status
// page's certificate of the same CA carrying a valid proof is still bound to no edge.
func TestCertBinding_AForwardNeedsAMembersCertificate(t *testing.T) {
	m, ca, srv := tlsMember(t, httpapi.Config{ClientCerts: true, AdminTokens: []string{adminToken}, Errors: coordinator.HTTPErrors(), MemberName: testkit.MemberName,
		Edges: []httpapi.EdgeCredential{{Edge: "edge-1", Regions: []string{"ams"}}}})
	mac := hmac.New(sha256.New, []byte(adminToken))
	mac.Write([]byte("muster forwarded request v1"))
	proof := hex.EncodeToString(mac.Sum(nil))
	register := func(hc *http.Client, id string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+api.PathRegister, strings.NewReader(`{"region":"ams","edge":"edge-1","nodes":[{"identity":"`+id+`"}]}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(api.HeaderForwarded, proof)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	if code, b := register(ca.Client(ca.IssueClient(t, "alice-statuspage")), "spoofed-1"); code != http.StatusForbidden || !strings.Contains(b, "alice-statuspage") || !strings.Contains(b, testkit.MemberName) {
		t.Fatalf("a forward with the proof on a certificate without the member name: %d %s, want 403 naming the certificate and the member name", code, b)
	}
	if n, err := m.svc.Node(ctxT(t), "spoofed-1"); err == nil {
		t.Fatalf("the spoofed register was applied: %+v", n)
	}
	if code, b := register(ca.Client(ca.IssueMember(t, "c2")), "forwarded-1"); code != http.StatusOK {
		t.Fatalf("a member's forward: %d %s, want 200", code, b)
	}
}

// TestReadCerts_OnlyNamedReadersOpenTheAdminReads: with client certificates on and no edge
// bound by certificate, an edge's certificate of the CA is no reader: only the certificates
// named in Readers (the status page's) open the admin reads.
func TestReadCerts_OnlyNamedReadersOpenTheAdminReads(t *testing.T) {
	_, ca, srv := tlsMember(t, httpapi.Config{ClientCerts: true, Readers: []string{"alice-statuspage"}, AdminTokens: []string{adminToken}, Errors: coordinator.HTTPErrors()})
	for cn, want := range map[string]int{"alice-statuspage": http.StatusOK, "edge-eu-1": http.StatusUnauthorized} {
		resp, err := ca.Client(ca.IssueClient(t, cn)).Get(srv.URL + api.PathNodes)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("nodes with %s's certificate: %d, want %d", cn, resp.StatusCode, want)
		}
	}
}
