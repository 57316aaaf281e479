// SPDX-License-Identifier: Apache-2.0

package edgesuite

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/choria-io/tokens"

	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/audit"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/fleet/realnode"
	"github.com/seed96588659/muster/sandbox/labkit"
)

// realRestarted waits until a real node has re-executed into its new configuration and left
// provisioning mode, connected.
func realRestarted(t *testing.T, l *lab.Lab, identity string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := l.Region(region).WaitNodeStatus(ctx, identity, func(s realnode.Status) bool {
		return s.Starts >= 2 && s.Connected && !s.Provisioning
	}); err != nil {
		t.Fatalf("%s did not come back configured: %v", identity, err)
	}
}

// TestEdge_RealNodesWithPKI: real go-choria nodes are provisioned end to end with jwt + pki (the
// sample helper signs their CSRs with the lab CA) and restart into a working configuration; a
// node whose CSR names a denied pattern is refused and never configured.
func TestEdge_RealNodesWithPKI(t *testing.T) {
	t.Parallel()
	l := startLab(t, lab.Options{Real: 2})
	denied := lab.RealIdentity(region, 2)
	re := startEdge(t, l, func(c *config.Config) {
		c.Features.PKI = true
		c.CertDenyList = append(config.DefaultCertDenyList(), "/^"+strings.ReplaceAll(denied, ".", `\.`)+"$/")
	}, nil)

	ok := lab.RealIdentity(region, 1)
	testkit.WaitFor(t, 2*time.Minute, "the allowed real node provisioned and the denied one refused", func() bool {
		return re.Has(ok, hostflow.Provisioned) && re.Has(denied, hostflow.Failed)
	})
	realRestarted(t, l, ok)
	expectError(t, re, denied, hostflow.Failed, nil, "matches denied certificate pattern")
	rep := labkit.LabReport(t, l)
	assertNoDoubleProvisioning(t, rep)
	if got := acceptedCount(rep, denied, audit.Configure); got != 0 {
		t.Fatalf("denied node accepted %d configures", got)
	}
}

// TestEdge_RealNodeWithED25519AndEncryptedKey: with jwt + ed25519 the edge signs a server JWT for
// the node's own ed25519 key, and a private key from the helper reaches the node encrypted by
// ECDH; the node decrypts it, writes it beside its certificate and restarts on it.
func TestEdge_RealNodeWithED25519AndEncryptedKey(t *testing.T) {
	t.Parallel()
	l := startLab(t, lab.Options{Real: 1})
	id := lab.RealIdentity(region, 1)
	dir := t.TempDir()
	seed, pub := signingKey(t, dir)
	helper := keyHelper(t, l, dir, id)
	re := startEdge(t, l, func(c *config.Config) {
		c.Features.ED25519 = true
		c.Features.JWT = true
		c.JWTSigningKey = seed
		c.Helper = helper
	}, nil)

	testkit.WaitFor(t, 2*time.Minute, "the real node provisioned", func() bool { return re.Has(id, hostflow.Provisioned) })
	realRestarted(t, l, id)

	raw, err := os.ReadFile(filepath.Join(l.Region(region).NodeDir(id), "server.jwt"))
	if err != nil {
		t.Fatalf("the node wrote no server.jwt: %v", err)
	}
	claims, err := tokens.ParseServerToken(string(raw), pub)
	if err != nil {
		t.Fatalf("server.jwt does not verify with the edge's signing key: %v", err)
	}
	if claims.ChoriaIdentity != id || claims.PublicKey == "" {
		t.Fatalf("server.jwt claims identity %q public key %q", claims.ChoriaIdentity, claims.PublicKey)
	}
	assertNoDoubleProvisioning(t, labkit.LabReport(t, l))
}

// TestEdge_RealNodeUpgradedThenProvisioned: a real node on an older version is sent
// release_update (the real agent downloads and swaps its binary), comes back on the target
// version, announces its startup, and is then configured and restarted.
func TestEdge_RealNodeUpgradedThenProvisioned(t *testing.T) {
	t.Parallel()
	l := startLab(t, lab.Options{Real: 1, BaseVersion: "0.29.4"})
	id := lab.RealIdentity(region, 1)
	re := startEdge(t, l, func(c *config.Config) {
		c.Features.Upgrades = true
		c.Features.PKI = true
	}, nil, withRealTimeouts)

	testkit.WaitFor(t, 4*time.Minute, "upgrade sent, then the node provisioned on the new version", func() bool {
		return re.Has(id, hostflow.UpgradeSent) && re.Has(id, hostflow.Provisioned)
	})
	res := re.ResultsOf(id)
	last := res[len(res)-1]
	if last.Outcome != hostflow.Provisioned || last.Version != l.UpgradeVersion() {
		t.Fatalf("last result %s on version %q, want provisioned on %s (all: %+v)", last.Outcome, last.Version, l.UpgradeVersion(), res)
	}
	realRestarted(t, l, id)
	rep := labkit.LabReport(t, l)
	assertNoDoubleProvisioning(t, rep)
	if got := acceptedCount(rep, id, audit.ReleaseUpdate); got != 1 {
		t.Fatalf("release_update accepted %d times, want 1", got)
	}
}

// signingKey writes a hex ed25519 seed file, as jwt_signing_key holds, and returns its path and
// public key.
func signingKey(t *testing.T, dir string) (string, ed25519.PublicKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "signer.seed")
	if err := os.WriteFile(path, []byte(hex.EncodeToString(priv.Seed())), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, pub
}

// keyHelper writes an exec helper that hands identity a CA-issued certificate and its private
// key (which the edge must encrypt), with a configuration that uses them.
func keyHelper(t *testing.T, l *lab.Lab, dir, identity string) string {
	t.Helper()
	r := l.Region(region)
	cert, err := r.Broker().CA().Issue(identity)
	if err != nil {
		t.Fatal(err)
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	ssl := filepath.Join(r.NodeDir(identity), "ssl-edge")
	answer := map[string]any{
		"certificate": read(cert.CertFile),
		"key":         read(cert.KeyFile),
		"ca":          read(r.Broker().CA().CAFile()),
		"ssldir":      ssl,
		"configuration": map[string]string{
			"identity":                         identity,
			"plugin.choria.server.provision":   "false",
			"plugin.choria.use_srv":            "false",
			"plugin.choria.middleware_hosts":   fmt.Sprintf("127.0.0.1:%d", r.Broker().Port()),
			"plugin.security.provider":         "file",
			"plugin.security.file.certificate": filepath.Join(ssl, "certificate.pem"),
			"plugin.security.file.key":         filepath.Join(ssl, "private.pem"),
			"plugin.security.file.ca":          filepath.Join(ssl, "ca.pem"),
			"logfile":                          filepath.Join(r.NodeDir(identity), realnode.LogFile),
		},
	}
	body, err := json.Marshal(answer)
	if err != nil {
		t.Fatal(err)
	}
	answerFile := filepath.Join(dir, "answer.json")
	if err := os.WriteFile(answerFile, body, 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "key-helper.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncat >/dev/null\ncat "+answerFile+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}
