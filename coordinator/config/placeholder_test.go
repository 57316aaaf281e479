// SPDX-License-Identifier: Apache-2.0

package config

import (
	"strings"
	"testing"

	"github.com/seed96588659/muster/pkg/testkit"
)

// TestLoad_RefusesTheShippedPlaceholderSecrets: every coordinator secret the packages and the
// Kubernetes example show (commented out or not) is refused as it stands, naming the key, so an
// operator who uncomments a line without replacing its value gets an error, not an admin API
// anyone who read the package opens.
func TestLoad_RefusesTheShippedPlaceholderSecrets(t *testing.T) {
	keyOf := map[string]string{EnvName(KeyAdminToken): KeyAdminToken, EnvName(KeyEdges): KeyEdges, EnvName(KeyEdgeTokens): KeyEdgeTokens}
	seen := 0
	for _, a := range testkit.ShippedAssignments(t, "../..") {
		key, ok := keyOf[a.Name]
		if !ok {
			continue
		}
		seen++
		t.Run(a.File+":"+a.Name, func(t *testing.T) {
			t.Setenv(a.Name, a.Value)
			args := []string{"--node-id", "c1", "--data-dir", "/tmp/d"}
			if key != KeyEdgeTokens {
				args = append(args, "--auth-edge-tokens", edgeTok) // a flag would hide the variable
			}
			_, err := load(t, args...)
			if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "example") {
				t.Fatalf("%s:%d %s=%s loads (%v); want it refused naming %s as the shipped example", a.File, a.Line, a.Name, a.Value, err, key)
			}
		})
	}
	if seen < 2 {
		t.Fatalf("found %d coordinator secrets in the shipped files, want the admin token and an edge token at least", seen)
	}
}

// TestLoad_RefusesAnyReplaceWithValue: a placeholder in the shipped form is refused in every
// credential key, whatever follows "replace-with" and in whatever case.
func TestLoad_RefusesAnyReplaceWithValue(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		key  string
	}{
		{"admin token", []string{"--auth-admin-token", "replace-with-something-long-enough"}, KeyAdminToken},
		{"unbound edge token", []string{"--auth-edge-tokens", "Replace-With-Your-Own-Edge-Token"}, KeyEdgeTokens},
		{"bound edge token", []string{"--auth-edges", "edge-eu-1@eu=REPLACE-WITH-A-TOKEN-OF-YOUR-OWN"}, KeyEdges},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := load(t, append([]string{"--node-id", "c1", "--data-dir", "/tmp/d", "--auth-edge-tokens", edgeTok}, c.args...)...)
			if err == nil || !strings.Contains(err.Error(), c.key) || !strings.Contains(err.Error(), "example") {
				t.Fatalf("Load(%v) = %v, want it refused naming %s", c.args, err, c.key)
			}
		})
	}
}
