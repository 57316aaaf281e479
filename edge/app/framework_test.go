// SPDX-License-Identifier: Apache-2.0

package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed96588659/muster/edge/config"
)

// sharedClientConfig writes one Choria client configuration, as a deployment copies to every edge
// of a region: same identity, same certificate.
func sharedClientConfig(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "client.conf")
	body := `identity = provisioner.example.net
collectives = provisioning
main_collective = provisioning
plugin.choria.use_srv = false
plugin.choria.middleware_hosts = 127.0.0.1:4222
plugin.security.provider = file
plugin.security.file.certificate = ` + filepath.Join(dir, "cert.pem") + `
plugin.security.file.key = ` + filepath.Join(dir, "key.pem") + `
plugin.security.file.ca = ` + filepath.Join(dir, "ca.pem") + `
`
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	// go-choria checks only that they exist until something is signed or dialled.
	for _, f := range []string{"cert.pem", "key.pem", "ca.pem"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// lockKey is what go-choria v0.30.0's provision agent keys a node's provisioning lock on: the
// request's sender id and caller id (lockFor(req.SenderID, req.CallerID)).
func lockKey(t *testing.T, cfg *config.Config) string {
	t.Helper()
	fw, err := framework(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fw.Config.Identity + "." + fw.CallerID()
}

// callerID is the caller id of the edge cfg builds.
func callerID(t *testing.T, cfg *config.Config) string {
	t.Helper()
	fw, err := framework(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fw.CallerID()
}

// TestFramework_EdgesSharingAClientConfigHoldTheirOwnLocks: two edges of one region built from
// one client configuration differ in what a node's provisioning lock is keyed on, so the lock
// tells them apart; the caller id (the certificate's name, which a verifying node checks the
// signature against) is the configuration's.
func TestFramework_EdgesSharingAClientConfigHoldTheirOwnLocks(t *testing.T) {
	t.Setenv("MCOLLECTIVE_CERTNAME", "provisioner.mcollective")
	path := sharedClientConfig(t)
	one := lockKey(t, &config.Config{ChoriaConfig: path, EdgeName: "edge-eu-1"})
	two := lockKey(t, &config.Config{ChoriaConfig: path, EdgeName: "edge-eu-2"})
	if one == two {
		t.Fatalf("edges edge-eu-1 and edge-eu-2 share the lock key %q", one)
	}
	if want := "edge-eu-1.choria=provisioner.mcollective"; one != want {
		t.Fatalf("lock key %q, want %q", one, want)
	}
	// Without an edge name the edge is named by its caller id; the configuration decides.
	if got, want := lockKey(t, &config.Config{ChoriaConfig: path}), "provisioner.example.net.choria=provisioner.mcollective"; got != want {
		t.Fatalf("without edge_name: lock key %q, want %q", got, want)
	}
}

// TestFramework_EdgeNameKeepsTheCertificateName: the edge name replaces only the sender id; the
// certificate name go-choria derives (from $USER, or for root from the configured identity) stays.
func TestFramework_EdgeNameKeepsTheCertificateName(t *testing.T) {
	t.Setenv("MCOLLECTIVE_CERTNAME", "")
	os.Unsetenv("MCOLLECTIVE_CERTNAME")
	path := sharedClientConfig(t)
	if got, want := callerID(t, &config.Config{ChoriaConfig: path, EdgeName: "edge-eu-1"}), callerID(t, &config.Config{ChoriaConfig: path}); got != want {
		t.Fatalf("caller id %q with an edge name, %q without", got, want)
	}
}

// TestCredentialRemedy_NamesTheSettingAndItsVariable: the one line an edge logs when the
// coordinators refuse its credential names what the operator sets, where, and for which edge.
func TestCredentialRemedy_NamesTheSettingAndItsVariable(t *testing.T) {
	got := credentialRemedy(&config.Config{CoordinatorToken: "x", Region: "eu"}, "e1")
	for _, want := range []string{"coordinator_token", config.EnvName("coordinator_token"), `edge "e1"`, `region "eu"`, "auth.edges"} {
		if !strings.Contains(got, want) {
			t.Fatalf("remedy %q does not name %s", got, want)
		}
	}
}
