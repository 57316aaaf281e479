// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
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

// TestAdminCommands_AWrongTokenIsToldApartFromAMissingOne: a token the members do not take is
// not reported as a missing one: the message says the token was refused and what to check.
func TestAdminCommands_AWrongTokenIsToldApartFromAMissingOne(t *testing.T) {
	url := inProcessMember(t)
	t.Setenv("MUSTER_AUTH_ADMIN_TOKEN", "")
	_, _, missing := runCLI(t, "status", "--addr", url)
	t.Setenv("MUSTER_AUTH_ADMIN_TOKEN", "not-the-admin-token")
	code, _, wrong := runCLI(t, "status", "--addr", url)
	if code != 1 || wrong == missing {
		t.Fatalf("a wrong token: exit %d, %q; a missing one: %q; want exit 1 and two messages", code, wrong, missing)
	}
	for _, want := range []string{"not an admin token", "MUSTER_AUTH_ADMIN_TOKEN", "--admin-token", "auth.admin_token"} {
		if !strings.Contains(wrong, want) {
			t.Errorf("a wrong token's message %q lacks %q", wrong, want)
		}
	}
	if strings.Contains(wrong, "not-the-admin-token") {
		t.Errorf("the message shows the token: %q", wrong)
	}
}

// servedMember runs `serve` in this process for one bootstrapping member and returns its API
// base URL and its log; it stops with the test.
func servedMember(t *testing.T) (string, *testkit.LogBuffer) {
	t.Helper()
	t.Setenv("MUSTER_AUTH_ADMIN_TOKEN", e2eAdminToken)
	t.Setenv("MUSTER_AUTH_EDGE_TOKENS", e2eEdgeToken)
	api := fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t))
	logs := &testkit.LogBuffer{}
	root := newRootCmd(io.Discard, logs)
	root.SetArgs([]string{"serve", "--node-id", "c1", "--data-dir", filepath.Join(t.TempDir(), "c1"), "--bootstrap",
		"--raft-bind", fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t)), "--http-bind", api})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	url := "http://" + api
	waitReady(t, url)
	return url, logs
}

// TestServe_LogLinesNameTheMemberOnce: every line of a member's log names it once, not
// "member=c1 member=c1".
func TestServe_LogLinesNameTheMemberOnce(t *testing.T) {
	_, logs := servedMember(t)
	text := logs.String()
	if !strings.Contains(text, "member=c1") {
		t.Fatalf("the log does not name the member:\n%s", text)
	}
	for line := range strings.Lines(text) {
		if strings.Count(line, "member=c1") > 1 {
			t.Errorf("a line names the member twice: %s", line)
		}
	}
}

// TestServe_TheRootSendsABrowserToTheStatusPage: `/` on a member redirects to /status/ (a
// person types the member's address), while an unknown path stays a 404.
func TestServe_TheRootSendsABrowserToTheStatusPage(t *testing.T) {
	url, _ := servedMember(t)
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(url + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/status/" {
		t.Fatalf("GET /: %d Location %q; want 302 to /status/", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, err = hc.Get(url + "/nothing-here")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET /nothing-here: %d, want 404", resp.StatusCode)
	}
}
