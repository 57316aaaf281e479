// SPDX-License-Identifier: Apache-2.0

package config_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/pkg/testkit"
)

// secretKeys maps the variable of each secret key to the key.
func secretKeys() map[string]string {
	out := map[string]string{}
	for _, k := range []string{"token", "broker_provisioning_password", "pause_token", "coordinator_token"} {
		out[config.EnvName(k)] = k
	}
	return out
}

// TestLoad_RefusesTheShippedPlaceholderSecrets: every edge secret the packages and the Kubernetes
// example show (commented out or not) is refused as it stands, naming the key: an operator who
// uncomments a line without replacing its value gets an error, not a pause endpoint anyone who
// read the package opens.
func TestLoad_RefusesTheShippedPlaceholderSecrets(t *testing.T) {
	keys := secretKeys()
	seen := map[string]bool{}
	for _, a := range testkit.ShippedAssignments(t, "../..") {
		key, ok := keys[a.Name]
		if !ok {
			continue
		}
		seen[key] = true
		t.Run(a.File+":"+a.Name, func(t *testing.T) {
			isolate(t)
			t.Setenv(config.EnvName("helper"), "/bin/helper")
			t.Setenv(a.Name, a.Value)
			_, _, err := config.Load(flags(t))
			if !slices.Contains(fieldKeys(err), key) || !strings.Contains(err.Error(), "example") {
				t.Fatalf("%s:%d %s=%s loads (%v); want it refused naming %s as the shipped example", a.File, a.Line, a.Name, a.Value, err, key)
			}
		})
	}
	for _, k := range []string{"token", "broker_provisioning_password", "pause_token"} {
		if !seen[k] {
			t.Errorf("no %s in the shipped files; the test reads %v", k, testkit.ShippedFiles())
		}
	}
}

// TestLoad_RefusesAnyReplaceWithValue: a placeholder in the shipped form is refused in every
// secret key, whatever follows "replace-with" and in whatever case.
func TestLoad_RefusesAnyReplaceWithValue(t *testing.T) {
	for name, key := range secretKeys() {
		t.Run(key, func(t *testing.T) {
			isolate(t)
			t.Setenv(config.EnvName("helper"), "/bin/helper")
			t.Setenv(name, "  Replace-With-Your-Own-"+key)
			_, _, err := config.Load(flags(t))
			if !slices.Contains(fieldKeys(err), key) {
				t.Fatalf("%s=Replace-With-... loads (%v); want it refused naming %s", name, err, key)
			}
		})
	}
}

// TestLoad_WarnsOfAPauseTokenOnAnOpenMonitor: the monitor serves plain HTTP, so a pause token
// sent to it from another machine crosses the network readable; the edge says so at start unless
// the monitor listens on loopback only (or the token or the monitor is off).
func TestLoad_WarnsOfAPauseTokenOnAnOpenMonitor(t *testing.T) {
	for _, c := range []struct {
		name, bind, port, token string
		warn                    bool
	}{
		{"all interfaces", "", "8080", "pause-token-0123456789", true},
		{"an outside address", "10.0.0.7", "8080", "pause-token-0123456789", true},
		{"loopback", "127.0.0.1", "8080", "pause-token-0123456789", false},
		{"loopback IPv6", "::1", "8080", "pause-token-0123456789", false},
		{"localhost", "localhost", "8080", "pause-token-0123456789", false},
		{"no token", "", "8080", "", false},
		{"no monitor", "", "0", "pause-token-0123456789", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			isolate(t)
			t.Setenv(config.EnvName("helper"), "/bin/helper")
			t.Setenv(config.EnvName("monitor_bind"), c.bind)
			t.Setenv(config.EnvName("monitor_port"), c.port)
			t.Setenv(config.EnvName("pause_token"), c.token)
			_, warnings, err := config.Load(flags(t))
			if err != nil {
				t.Fatal(err)
			}
			warned := slices.ContainsFunc(warnings, func(w string) bool {
				return strings.HasPrefix(w, "pause_token:") && strings.Contains(w, "plain text")
			})
			if warned != c.warn {
				t.Fatalf("monitor_bind %q monitor_port %s pause token set %t: warnings %q, want a pause_token warning %t", c.bind, c.port, c.token != "", warnings, c.warn)
			}
		})
	}
}
