// SPDX-License-Identifier: Apache-2.0

package config_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge/config"
)

func TestRedacted_HidesSecretsAndShowsWhetherSet(t *testing.T) {
	c := config.Defaults()
	c.Helper = "/bin/helper"
	c.Token = "tok-9f8e7d"
	c.BrokerProvisioningPassword = "pw-1a2b3c"
	c.Site = "dc1"
	m := c.Redacted()
	text := fmt.Sprint(m)
	for _, secret := range []string{c.Token, c.BrokerProvisioningPassword} {
		if strings.Contains(text, secret) {
			t.Errorf("Redacted shows %q: %s", secret, text)
		}
	}
	if m["token"] != config.Redacted || m["broker_provisioning_password"] != config.Redacted || m["pause_token"] != "" {
		t.Errorf("token %v, password %v, pause_token %v", m["token"], m["broker_provisioning_password"], m["pause_token"])
	}
	c.PauseToken = "pause-5e6f"
	if m := c.Redacted(); m["pause_token"] != config.Redacted || strings.Contains(fmt.Sprint(m), c.PauseToken) {
		t.Errorf("pause_token shown: %v", m["pause_token"])
	}
	for _, k := range config.Keys() {
		top, _, _ := strings.Cut(k, ".")
		if _, ok := m[top]; !ok {
			t.Errorf("Redacted has no %s", k)
		}
	}
	if m["site"] != "dc1" || m["interval"] != "1m0s" {
		t.Errorf("site %v interval %v", m["site"], m["interval"])
	}
}

func TestValidate_GoAPIAllowsIntervalsBelowTheFileMinimum(t *testing.T) {
	c := config.Defaults()
	c.Helper = "/bin/helper"
	c.Interval = 2 * time.Second
	if err := c.Validate(); err != nil {
		t.Errorf("2s interval in Go: %v", err)
	}
	c.Interval = 0
	if got := fieldKeys(c.Validate()); len(got) != 1 || got[0] != "interval" {
		t.Errorf("zero interval: %v, want an error naming interval", got)
	}
	c.Interval = time.Second
	c.Features.ED25519 = true
	c.JWTVerifyCert, c.JWTSigningKey = "k", "s"
	if got := fieldKeys(c.Validate()); len(got) != 1 || got[0] != "features.jwt" {
		t.Errorf("ed25519 without jwt in Go: %v, want features.jwt", got)
	}
}

func TestValidate_ReportsEveryInvalidKey(t *testing.T) {
	c := config.Defaults()
	c.Workers, c.BatchSize, c.LogFormat = 0, 0, "xml"
	got := fieldKeys(c.Validate())
	want := []string{"workers", "helper", "log_format", "batch_size"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("keys %v, want %v", got, want)
	}
}

func TestBindFlags_SecretsHaveNoFlag(t *testing.T) {
	fs := flags(t)
	for _, name := range []string{"token", "broker-provisioning-password", "pause-token", "broker_provisioning_password", "pause_token"} {
		if fs.Lookup(name) != nil {
			t.Errorf("--%s exists; secrets come from the file or the environment", name)
		}
	}
	for _, name := range []string{"config", "workers", "monitor-port", "helper", "helper-persistent", "site", "region", "interval", "loglevel", "log-format", "choria-config"} {
		if fs.Lookup(name) == nil {
			t.Errorf("--%s missing", name)
		}
	}
	if fs.Lookup("lab") != nil {
		t.Error("--lab exists; the sandbox writes an ordinary configuration file for --config")
	}
}

func TestValidate_ClusterModeNeedsABoundCredential(t *testing.T) {
	base := func() *config.Config {
		c := config.Defaults()
		c.Helper = "/bin/helper"
		c.Coordinators = []string{"https://c1:8443", "http://c2:8000"}
		return c
	}
	cases := []struct {
		name string
		edit func(*config.Config)
		key  string
	}{
		{"no credential", func(*config.Config) {}, "coordinator_token"},
		{"cert without key", func(c *config.Config) { c.CoordinatorToken = "t"; c.CoordinatorTLSCert = "/c.pem" }, "coordinator_tls_key"},
		{"cert over http", func(c *config.Config) { c.CoordinatorTLSCert, c.CoordinatorTLSKey = "/c.pem", "/k.pem" }, "coordinator_tls_cert"},
		{"no margin", func(c *config.Config) { c.CoordinatorToken = "t"; c.LeaseMargin = 0 }, "lease_margin"},
		{"no state dir", func(c *config.Config) { c.CoordinatorToken = "t"; c.StateDir = "" }, "state_dir"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			tc.edit(c)
			err := c.Validate()
			var fe *config.FieldError
			if !errors.As(err, &fe) || fe.Key != tc.key {
				t.Fatalf("error %v, want one naming %s", err, tc.key)
			}
		})
	}
	c := base()
	c.CoordinatorToken = "edge-secret"
	if err := c.Validate(); err != nil {
		t.Fatalf("a token is enough: %v", err)
	}
	if got := c.Redacted()["coordinator_token"]; got != config.Redacted {
		t.Fatalf("coordinator_token redacted as %v", got)
	}
}

// call_history records calls to the coordinators, so a standalone edge, which makes none, refuses it.
func TestValidate_CallHistoryNeedsCoordinators(t *testing.T) {
	c := config.Defaults()
	c.Helper = "/bin/helper"
	c.CallHistory = "/tmp/calls.jsonl"
	var fe *config.FieldError
	if err := c.Validate(); !errors.As(err, &fe) || fe.Key != "call_history" {
		t.Fatalf("standalone with call_history: %v, want an error naming call_history", err)
	}
	c.Coordinators = []string{"http://c1:8000"}
	c.CoordinatorToken = "t"
	if err := c.Validate(); err != nil {
		t.Fatalf("cluster mode with call_history: %v", err)
	}
}

// Every secret key's value is among Secrets, which the helper's output is redacted by.
func TestSecrets_EverySecretKeyThatIsSet(t *testing.T) {
	c := config.Defaults()
	c.Token, c.BrokerProvisioningPassword, c.PauseToken, c.CoordinatorToken = "t1", "p2", "", "c4"
	got := c.Secrets()
	if len(got) != 3 || got[0] != "t1" || got[1] != "p2" || got[2] != "c4" {
		t.Fatalf("Secrets() = %q, want the three that are set", got)
	}
}

// The helper may be given further variables, never the edge's own MUSTER_ ones.
func TestValidate_HelperEnvironment(t *testing.T) {
	c := config.Defaults()
	c.Helper = "/bin/helper"
	c.HelperEnvironment = []string{"CMDB_URL", "https_proxy"}
	if err := c.Validate(); err != nil {
		t.Fatalf("valid names: %v", err)
	}
	for _, name := range []string{"MUSTER_EDGE_TOKEN", "muster_edge_token", "1X", "A=B", ""} {
		c.HelperEnvironment = []string{name}
		if got := fieldKeys(c.Validate()); len(got) != 1 || got[0] != "helper_environment" {
			t.Errorf("helper_environment %q: %v, want an error naming helper_environment", name, got)
		}
	}
}
