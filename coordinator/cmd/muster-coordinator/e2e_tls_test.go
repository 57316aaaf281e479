// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
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

	"github.com/seed96588659/muster/pkg/api"
)

// pemPKI writes a throwaway CA and certificates issued by it as PEM files.
type pemPKI struct {
	t    *testing.T
	dir  string
	ca   *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newPKI(t *testing.T) *pemPKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "muster e2e CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	p := &pemPKI{t: t, dir: t.TempDir(), ca: ca, key: key, pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	p.write("ca.pem", "CERTIFICATE", der)
	return p
}

func (p *pemPKI) write(name, typ string, der []byte) string {
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		p.t.Fatal(err)
	}
	return path
}

// issue writes NAME.pem and NAME.key for 127.0.0.1, usable as server and client certificate.
func (p *pemPKI) issue(name string) (certPath, keyPath string, kp tls.Certificate) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		p.t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.key)
	if err != nil {
		p.t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		p.t.Fatal(err)
	}
	return p.write(name+".pem", "CERTIFICATE", der), p.write(name+".key", "EC PRIVATE KEY", kder),
		tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func (p *pemPKI) client(certs ...tls.Certificate) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: p.pool, Certificates: certs, MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: tr}
}

// TestE2E_TLSWithClientCertificates runs two members over HTTPS: they join and forward with their
// own certificates, an edge with only a client certificate works through the follower, the CLI
// trusts the CA, and a caller without certificate or token is refused.
func TestE2E_TLSWithClientCertificates(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two coordinator processes")
	}
	pki := newPKI(t)
	cert, key, _ := pki.issue("coordinator")
	ca := filepath.Join(pki.dir, "ca.pem")
	c := &e2eCluster{
		t: t, bin: buildBinary(t), dir: t.TempDir(), https: pki.client(),
		serveArgs: []string{"--tls-cert", cert, "--tls-key", key, "--tls-ca", ca, "--auth-client-certs"},
		cliArgs:   []string{"--tls-ca", ca},
	}
	defer c.stopAll()
	first := c.start("c1", true, "")
	c.waitLeader(t, first.apiURL, 1, "")
	follower := c.start("c2", false, first.apiURL)
	c.waitLeader(t, c.addrs(""), 2, "")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _, edgeCert := pki.issue("edge-ams-1")
	edge, err := api.NewClient([]string{follower.apiURL}, api.WithHTTPClient(pki.client(edgeCert)))
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

	anonymous, _ := api.NewClient([]string{follower.apiURL}, api.WithHTTPClient(pki.client()), api.WithAttempts(1))
	if _, err := anonymous.Register(ctx, api.RegisterRequest{Region: "ams", Edge: "x", Nodes: []api.RegisterNode{{Identity: "n"}}}); !api.IsCode(err, api.CodeUnauthorized) {
		t.Fatalf("register without certificate or token: %v", err)
	}
	plain, _ := api.NewClient([]string{"http://" + follower.apiURL[len("https://"):]}, api.WithToken(e2eEdgeToken), api.WithAttempts(1))
	if _, err := plain.Heartbeat(ctx, api.HeartbeatRequest{Edge: "x", Region: "ams"}); err == nil {
		t.Fatal("plain HTTP to the HTTPS port was served")
	}
}
