// SPDX-License-Identifier: Apache-2.0

package config

import (
	"slices"
	"strings"
	"testing"
)

// TestLoad_RefusesInsecureCombinations: auth.insecure makes every caller, with any token or
// none, act as any edge, so it contradicts edge credentials and may not face a network.
func TestLoad_RefusesInsecureCombinations(t *testing.T) {
	base := []string{"--node-id", "c1", "--data-dir", "/tmp/d", "--auth-insecure"}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"with edge bindings", []string{"--auth-edges", "edge-eu-1@eu=" + edgeTok}, "auth.insecure contradicts auth.edges"},
		{"with edge tokens", []string{"--auth-edge-tokens", edgeTok}, "auth.insecure contradicts auth.edge_tokens"},
		{"on every interface", []string{"--http-bind", "0.0.0.0:8000", "--http-advertise", "http://10.0.0.1:8000"}, "auth.insecure: http.bind 0.0.0.0:8000 is not a loopback address"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := load(t, append(append([]string{}, base...), c.args...)...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// TestLoad_WarnsOfWhatIsInsecureButAllowed: each setting that stays allowed but exposes the
// cluster gets one warning line naming the key, and so do unknown MUSTER_* variables (an edge's
// MUSTER_EDGE_* ones on the same host are not the coordinator's business) and an admin token
// given as a flag, which shows in ps.
func TestLoad_WarnsOfWhatIsInsecureButAllowed(t *testing.T) {
	t.Setenv("MUSTER_LEASE_TLL", "30s")
	t.Setenv("MUSTER_EDGE_REGION", "eu")
	c, err := load(t, "--node-id", "c1", "--data-dir", "/tmp/d", "--auth-insecure", "--raft-bind", "0.0.0.0:7000", "--raft-advertise", "10.0.0.1:7000", "--auth-admin-token", adminTok)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"auth.insecure: the edge API takes requests without any credential",
		"raft.tls: off while raft.bind 0.0.0.0:7000 is not a loopback address",
		"MUSTER_LEASE_TLL: not a setting, ignored (did you mean MUSTER_LEASE_TTL?)",
		"--auth-admin-token: the admin token given as a flag shows in ps",
	} {
		if !slices.ContainsFunc(c.Warnings, func(w string) bool { return strings.Contains(w, want) }) {
			t.Errorf("no warning %q in %q", want, c.Warnings)
		}
	}
	if slices.ContainsFunc(c.Warnings, func(w string) bool { return strings.Contains(w, "MUSTER_EDGE_REGION") }) {
		t.Errorf("an edge's variable warned about: %q", c.Warnings)
	}
	quiet, err := load(t, "--node-id", "c1", "--data-dir", "/tmp/d", "--auth-edge-tokens", edgeTok)
	if err != nil || slices.ContainsFunc(quiet.Warnings, func(w string) bool { return !strings.HasPrefix(w, "MUSTER_") }) {
		t.Fatalf("a loopback configuration with tokens warns %q (%v); want only of unknown variables", quiet.Warnings, err)
	}
}
