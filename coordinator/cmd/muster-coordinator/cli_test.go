// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestServe_RefusesABadValueAtStartNamingTheKey(t *testing.T) {
	t.Setenv("MUSTER_AUTH_EDGE_TOKENS", e2eEdgeToken)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--lease-ttl", "30"}, `lease.ttl: "30" is not a duration`},
		{[]string{"--raft-bind", "nowhere"}, `raft.bind: "nowhere" is not host:port`},
		{[]string{"--bootstrap", "--join", "http://127.0.0.1:1", "--auth-admin-token", e2eAdminToken}, "bootstrap and join"},
	}
	for _, c := range cases {
		args := append([]string{"serve", "--node-id", "c1", "--data-dir", t.TempDir()}, c.args...)
		code, _, stderr := runCLI(t, args...)
		if code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("serve %v: exit %d, stderr %q; want 1 and %q", c.args, code, stderr, c.want)
		}
	}
	t.Setenv("MUSTER_LEASE_GRACE", "-1s")
	code, _, stderr := runCLI(t, "serve", "--node-id", "c1", "--data-dir", t.TempDir())
	if code != 1 || !strings.Contains(stderr, "lease.grace: -1s is negative") {
		t.Errorf("env MUSTER_LEASE_GRACE=-1s: exit %d, %q", code, stderr)
	}
}

func TestAdminCommands_RefuseBeforeCallingAnyone(t *testing.T) {
	t.Setenv("MUSTER_AUTH_ADMIN_TOKEN", "")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"status", "--addr", "http://127.0.0.1:1"}, "no admin token"},
		{[]string{"join", "--id", "c2", "--raft-address", "127.0.0.1:7002", "--api-address", "127.0.0.1:8002", "--admin-token", e2eAdminToken}, "api_address"},
		{[]string{"nodes", "--state", "vanished", "--admin-token", e2eAdminToken}, `state: "vanished"`},
		{[]string{"status", "--addr", "127.0.0.1:8000", "--admin-token", e2eAdminToken}, "must start with http://"},
		{[]string{"node"}, "accepts 1 arg"},
	}
	for _, c := range cases {
		code, _, stderr := runCLI(t, c.args...)
		if code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 1 and %q", c.args, code, stderr, c.want)
		}
	}
}
