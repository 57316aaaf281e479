// SPDX-License-Identifier: Apache-2.0

package broker

import (
	"context"
	"crypto/tls"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/seed96588659/muster/sandbox/fleet/pki"
)

func startBroker(t *testing.T) *Broker {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := Start(ctx, Options{Dir: t.TempDir(), Region: "eu"})
	if err != nil {
		t.Fatalf("start broker: %v", err)
	}
	t.Cleanup(func() { b.Stop() })
	return b
}

func TestBroker_ProvisionerUserNeedsPasswordAndCertificate(t *testing.T) {
	b := startBroker(t)
	tlsc, err := b.ClientTLS("edge-eu-1.mcollective")
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(b.URL(), nats.Secure(tlsc), nats.UserInfo(ProvisioningUser, b.ProvisioningPassword()), nats.Timeout(10*time.Second))
	if err != nil {
		t.Fatalf("provisioner with certificate and password refused: %v", err)
	}
	nc.Close()

	if nc, err := nats.Connect(b.URL(), nats.Secure(tlsc), nats.UserInfo(ProvisioningUser, "wrong"), nats.Timeout(10*time.Second)); err == nil {
		nc.Close()
		t.Fatal("provisioner with a wrong password was admitted")
	}
	anon := &tls.Config{InsecureSkipVerify: true}
	if nc, err := nats.Connect(b.URL(), nats.Secure(anon), nats.UserInfo(ProvisioningUser, b.ProvisioningPassword()), nats.Timeout(10*time.Second)); err == nil {
		nc.Close()
		t.Fatal("provisioner without a client certificate was admitted")
	}
}

func TestBroker_AdmitsNodesWithSignedProvisioningJWTOnly(t *testing.T) {
	b := startBroker(t)
	anon := &tls.Config{InsecureSkipVerify: true}
	jwt, err := b.ProvisioningJWT(true)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(b.URL(), nats.Secure(anon), nats.Token(jwt), nats.Timeout(10*time.Second))
	if err != nil {
		t.Fatalf("node with a signed provisioning JWT refused: %v", err)
	}
	nc.Close()

	other, err := pki.NewSigner(filepath.Join(t.TempDir(), "other"))
	if err != nil {
		t.Fatal(err)
	}
	forged, err := other.Sign(pki.ProvisioningJWT{Token: b.Token(), BrokerURLs: []string{b.URL()}})
	if err != nil {
		t.Fatal(err)
	}
	if nc, err := nats.Connect(b.URL(), nats.Secure(anon), nats.Token(forged), nats.Timeout(10*time.Second)); err == nil {
		nc.Close()
		t.Fatal("node with a JWT from another signer was admitted")
	}
}

func TestBroker_ClientFrameworkUsesIdentity(t *testing.T) {
	b := startBroker(t)
	fw, err := b.ClientFramework("edge-eu-2.mcollective")
	if err != nil {
		t.Fatal(err)
	}
	if got := fw.CallerID(); got != "choria=edge-eu-2.mcollective" {
		t.Fatalf("caller id %q", got)
	}
	conn, err := fw.NewConnector(context.Background(), fw.MiddlewareServers, "test", fw.Logger("test"))
	if err != nil {
		t.Fatalf("client framework could not connect: %v", err)
	}
	conn.Close()
}

func TestBroker_ClientLogOpenOncePerIdentityClosedOnStop(t *testing.T) {
	b := startBroker(t)
	const id = "edge-eu-3.mcollective"
	for range 3 {
		if _, err := b.ClientFramework(id); err != nil {
			t.Fatal(err)
		}
	}
	log := filepath.Join(b.opts.Dir, "clients", id+".log")
	if n := openFDs(t, log); n != 1 {
		t.Fatalf("%s open %d times after 3 frameworks, want 1", log, n)
	}
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
	if n := openFDs(t, log); n != 0 {
		t.Fatalf("%s still open %d times after Stop", log, n)
	}
}

// openFDs counts this process's descriptors open on path.
func openFDs(t *testing.T, path string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == path {
			n++
		}
	}
	return n
}

func TestStart_RequiresDir(t *testing.T) {
	if _, err := Start(context.Background(), Options{}); err == nil {
		t.Fatal("Start without Dir succeeded")
	}
}
