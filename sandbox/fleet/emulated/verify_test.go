// SPDX-License-Identifier: Apache-2.0

package emulated

import (
	"crypto/x509"
	"path/filepath"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/pki"
)

func TestVerify_SecureNodesAnswerOnlyCallersOfTheirCA(t *testing.T) {
	lab := startLab(t, 0, nil, nil)
	other, err := pki.NewCA(filepath.Join(t.TempDir(), "other"))
	if err != nil {
		t.Fatal(err)
	}
	start := func(prefix string, ca *x509.CertPool) *Fleet {
		f, err := Start(t.Context(), Config{
			BrokerURL: lab.broker.URL(), Region: "eu", Prefix: prefix, Count: 3, Token: lab.broker.Token(),
			JWT: mustJWT(t, lab), CallerCA: ca,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Stop() })
		return f
	}
	secure := start("sec.example.", lab.broker.CA().Pool())
	foreign := start("foreign-", other.Pool())

	good := lab.framework(t, "edge-eu-1.mcollective")
	if got := lab.rawInventory(t, good, "sec.example.00001", 1, 30*time.Second); len(got) != 1 {
		t.Fatalf("caller with a certificate of the CA got %d replies", len(got))
	}
	// Not on go-choria's default allow list (names must end in .mcollective or .choria).
	odd := lab.framework(t, "edge-eu-1")
	if got := lab.rawInventory(t, odd, "sec.example.00001", 0, 2*time.Second); len(got) != 0 {
		t.Fatalf("caller off the allow list got %d replies", len(got))
	}
	// A certificate from another CA is refused although the broker let the client in.
	if got := lab.rawInventory(t, good, "foreign-00001", 0, 2*time.Second); len(got) != 0 {
		t.Fatalf("caller of a foreign CA got %d replies", len(got))
	}
	// The empty windows above end on their own clock, not on the fleets having seen the
	// requests: on a loaded machine a refusal may be counted only later.
	testkit.WaitFor(t, 30*time.Second, "both refusals to be counted", func() bool {
		return secure.Stats().Invalid >= 1 && foreign.Stats().Invalid >= 1
	})
	if secure.Stats().Invalid != 1 || foreign.Stats().Invalid != 1 {
		t.Fatalf("refused requests counted %d and %d, want 1 each", secure.Stats().Invalid, foreign.Stats().Invalid)
	}
}

func TestFleet_SeveralConnectionsShareTheWork(t *testing.T) {
	l := startLab(t, 50, nil, func(c *Config) { c.Connections = 3 })
	fw := l.framework(t, "edge-eu-1.mcollective")
	found := l.discover(t, fw, 50, 30*time.Second, nil)
	if len(found) != 50 {
		t.Fatalf("with 3 connections discovery found %d of 50 (each request must reach one connection only)", len(found))
	}
	if got := l.rawInventory(t, fw, "emu-eu-00042", 1, 30*time.Second); len(got) != 1 {
		t.Fatalf("inventory got %d replies", len(got))
	}
}

func mustJWT(t *testing.T, l *testLab) string {
	t.Helper()
	j, err := l.broker.ProvisioningJWT(true)
	if err != nil {
		t.Fatal(err)
	}
	return j
}
