// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/coordinator/config"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// TestE2E_TLSWithClientCertificates runs two members over HTTPS with Raft over mutual TLS: they
// join, replicate and forward with their own certificates, an edge with only its bound client
// certificate works through the follower (the forward carries the member's proof), another
// certificate of the CA may not act as that edge however it marks its request, the CLI trusts
// the CA, and a caller without certificate or token is refused.
func TestE2E_TLSWithClientCertificates(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two coordinator processes")
	}
	pki, dir := testkit.NewCA(t, "muster e2e CA"), t.TempDir()
	cert, key := testkit.WriteCert(t, dir, "coordinator", pki.IssueMember(t, "coordinator"))
	ca := pki.WriteCA(t, dir)
	c := &e2eCluster{
		t: t, bin: buildBinary(t), dir: t.TempDir(), https: pki.Client(),
		serveArgs: []string{"--tls-cert", cert, "--tls-key", key, "--tls-ca", ca, "--auth-client-certs", "--raft-tls", "--auth-edges", "edge-ams-1@ams"},
		cliArgs:   []string{"--tls-ca", ca},
	}
	defer c.stopAll()
	first := c.start("c1", true, "")
	c.waitLeader(t, first.apiURL, 1, "")
	follower := c.start("c2", false, first.apiURL)
	c.waitLeader(t, c.addrs(""), 2, "")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	edgeCert := pki.IssueClient(t, "edge-ams-1")
	edge, err := api.NewClient([]string{follower.apiURL}, api.WithHTTPClient(pki.Client(edgeCert)))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := edge.Register(ctx, api.RegisterRequest{Region: "ams", Edge: "edge-ams-1", Nodes: []api.RegisterNode{{Identity: "tls-node-1"}}}); err != nil || r.Added != 1 {
		t.Fatalf("register with a client certificate through the follower: %+v %v", r, err)
	}
	got, err := edge.Acquire(ctx, api.AcquireRequest{Edge: "edge-ams-1", Region: "ams", MaxNodes: 1, Wait: api.Duration(5 * time.Second)})
	if err != nil || got.Lease == nil || got.Lease.Nodes[0] != "tls-node-1" {
		t.Fatalf("acquire: %+v %v", got, err)
	}

	// Another certificate of the CA is bound to no edge: straight to the leader it may not act
	// as edge-ams-1, even marked forwarded; through the follower its forward is refused alike.
	operator := pki.IssueClient(t, "operator-statuspage")
	for _, url := range []string{first.apiURL, follower.apiURL} {
		spoof, _ := api.NewClient([]string{url}, api.WithHTTPClient(pki.Client(operator)), api.WithAttempts(1))
		if _, err := spoof.Register(ctx, api.RegisterRequest{Region: "ams", Edge: "edge-ams-1", Nodes: []api.RegisterNode{{Identity: "spoofed"}}}); !api.IsCode(err, api.CodeWrongEdge) {
			t.Fatalf("register as edge-ams-1 with an unbound certificate via %s: %v, want %s", url, err, api.CodeWrongEdge)
		}
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, first.apiURL+api.PathRegister, strings.NewReader(`{"region":"ams","edge":"edge-ams-1","nodes":[{"identity":"spoofed"}]}`))
	req.Header.Set(api.HeaderForwarded, "1")
	resp, err := pki.Client(operator).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("an unbound certificate marking its request forwarded: %d, want 403", resp.StatusCode)
	}

	anonymous, _ := api.NewClient([]string{follower.apiURL}, api.WithHTTPClient(pki.Client()), api.WithAttempts(1))
	if _, err := anonymous.Register(ctx, api.RegisterRequest{Region: "ams", Edge: "x", Nodes: []api.RegisterNode{{Identity: "n"}}}); !api.IsCode(err, api.CodeUnauthorized) {
		t.Fatalf("register without certificate or token: %v", err)
	}
	plain, _ := api.NewClient([]string{"http://" + follower.apiURL[len("https://"):]}, api.WithToken(e2eEdgeToken), api.WithAttempts(1))
	if _, err := plain.Heartbeat(ctx, api.HeartbeatRequest{Edge: "x", Region: "ams"}); err == nil {
		t.Fatal("plain HTTP to the HTTPS port was served")
	}
}

// TestTLSSetup_RaftRefusesAMemberCertificateWithoutTheMemberName: with raft.tls a member whose
// own certificate lacks tls.member_name would be refused by every other member; it stops at
// start and says what to reissue.
func TestTLSSetup_RaftRefusesAMemberCertificateWithoutTheMemberName(t *testing.T) {
	pki, dir := testkit.NewCA(t, "muster test CA"), t.TempDir()
	cfg := config.Config{Raft: config.Raft{TLS: true}}
	cfg.TLS.Cert, cfg.TLS.Key = testkit.WriteCert(t, dir, "edge", pki.IssueClient(t, "edge-eu-1"))
	cfg.TLS.CA, cfg.TLS.MemberName = pki.WriteCA(t, dir), testkit.MemberName
	if _, _, _, err := tlsSetup(cfg); err == nil || !strings.Contains(err.Error(), "tls.member_name="+testkit.MemberName) {
		t.Fatalf("raft tls with a certificate lacking the member name: %v", err)
	}
	cfg.TLS.Cert, cfg.TLS.Key = testkit.WriteCert(t, dir, "member", pki.IssueMember(t, "c1"))
	if _, _, raft, err := tlsSetup(cfg); err != nil || raft == nil {
		t.Fatalf("raft tls with a member's certificate: %v", err)
	}
}

// TestHTTPServer_ErrorLogIsAWarningOfTheMemberLog: what net/http reports on its error log (here
// a client sending bytes that are no TLS handshake) reaches the member's slog log as one warning.
func TestHTTPServer_ErrorLogIsAWarningOfTheMemberLog(t *testing.T) {
	pki, dir := testkit.NewCA(t, "muster test CA"), t.TempDir()
	var cfg config.Config
	cfg.TLS.Cert, cfg.TLS.Key = testkit.WriteCert(t, dir, "member", pki.IssueMember(t, "c1"))
	serverTLS, _, _, err := tlsSetup(cfg)
	if err != nil {
		t.Fatal(err)
	}
	log, buf := testkit.NewLogger()
	srv := httpServer(context.Background(), http.NotFoundHandler(), serverTLS, log.With("member", "c1"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_, _ = conn.Write([]byte("not a TLS client hello\r\n"))
	_ = conn.Close()

	line := func() string {
		for l := range strings.SplitSeq(buf.String(), "\n") {
			if strings.Contains(l, "TLS handshake error") {
				return l
			}
		}
		return ""
	}
	testkit.WaitFor(t, 10*time.Second, "the TLS handshake error in the member log", func() bool { return line() != "" })
	if l := line(); !strings.Contains(l, "level="+slog.LevelWarn.String()) || !strings.Contains(l, "member=c1") {
		t.Errorf("the HTTP server's error is %q, want a warning of member c1", l)
	}
	if n := strings.Count(buf.String(), "TLS handshake error"); n != 1 {
		t.Errorf("the TLS handshake error is logged %d times, want once:\n%s", n, buf.String())
	}
}
