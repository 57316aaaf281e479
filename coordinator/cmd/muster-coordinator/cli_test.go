// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed96588659/muster/pkg/testkit"
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

// A member whose API address is taken exits naming http.bind before it writes anything: a
// bootstrap that recorded its Raft address first left a data directory that a retry on other
// ports could not use (its own configuration named the address it did not listen on).
func TestServe_ABusyAPIPortWritesNoState(t *testing.T) {
	t.Setenv("MUSTER_AUTH_EDGE_TOKENS", e2eEdgeToken)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dir := filepath.Join(t.TempDir(), "c1")
	code, _, stderr := runCLI(t, "serve", "--node-id", "c1", "--data-dir", dir, "--bootstrap",
		"--raft-bind", fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t)), "--http-bind", busy.Addr().String())
	if code != 1 || !strings.Contains(stderr, "http.bind") {
		t.Fatalf("serve on a busy API port: exit %d, stderr %q; want 1 naming http.bind", code, stderr)
	}
	if entries, err := os.ReadDir(dir); !os.IsNotExist(err) {
		t.Errorf("the data directory was written before the API port was found busy: %v %v", entries, err)
	}
}
