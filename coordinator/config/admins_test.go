// SPDX-License-Identifier: Apache-2.0

package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed96588659/muster/pkg/api"
)

const (
	aliceTok = "alice-token-0123456789"
	bobTok   = "bob-token-0123456789ab"
)

// tlsArgs are a member's TLS flags over files that exist, for the certificate-bound admins.
func tlsArgs(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"c.pem", "c.key", "ca.pem"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"--http-advertise", "https://127.0.0.1:8000", "--tls-cert", filepath.Join(dir, "c.pem"), "--tls-key", filepath.Join(dir, "c.key"), "--tls-ca", filepath.Join(dir, "ca.pem")}
}

// TestLoad_AdminsBindANameAndARoleToATokenOrACertificate: auth.admins reads NAME:ROLE=TOKEN and
// NAME:ROLE (the client certificate of that common name) from a flag, the environment and the
// file, as auth.edges reads its items.
func TestLoad_AdminsBindANameAndARoleToATokenOrACertificate(t *testing.T) {
	file := writeFile(t, "node_id: c1\ndata_dir: /tmp/d\nauth:\n  edge_tokens: ["+edgeTok+"]\n  admins:\n    - bob:admin="+bobTok+"\n")
	c, err := load(t, "--config", file)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Admin{{Name: "bob", Role: api.RoleAdmin, Token: bobTok}}; !slices.Equal(c.Auth.Admins, want) {
		t.Fatalf("admins from the file %v, want %v", c.Auth.Admins, want)
	}

	t.Setenv(EnvName(KeyAdmins), "alice:operate="+aliceTok+" carol:read")
	c, err = load(t, append([]string{"--node-id", "c1", "--data-dir", "/tmp/d", "--auth-edge-tokens", edgeTok, "--auth-admin-token", adminTok}, tlsArgs(t)...)...)
	if err != nil {
		t.Fatal(err)
	}
	want := []Admin{{Name: "alice", Role: api.RoleOperate, Token: aliceTok}, {Name: "carol", Role: api.RoleRead}}
	if !slices.Equal(c.Auth.Admins, want) {
		t.Fatalf("admins %v, want %v", c.Auth.Admins, want)
	}
	if s := c.Auth.String(); strings.Contains(s, aliceTok) || !strings.Contains(s, "admins:2") {
		t.Fatalf("Auth.String() = %q: want the count of admins and never a token", s)
	}
}

// TestLoad_RefusesBadAdminsNamingTheEntry: each bad auth.admins entry is refused with an error
// naming the key, the entry and what is wrong, and never the token.
func TestLoad_RefusesBadAdminsNamingTheEntry(t *testing.T) {
	base := []string{"--node-id", "c1", "--data-dir", "/tmp/d", "--auth-edges", "edge-eu-1@eu=" + edgeTok}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no role", []string{"--auth-admins", "alice=" + aliceTok}, `auth.admins: item 0: expected NAME:ROLE[=TOKEN], got "alice"`},
		{"unknown role", []string{"--auth-admins", "alice:root=" + aliceTok}, `auth.admins[0] (alice): role "root" is not one of [read operate admin]`},
		{"empty name", []string{"--auth-admins", ":read=" + aliceTok}, `auth.admins: item 0: expected NAME:ROLE[=TOKEN], got ":read"`},
		{"bad name", []string{"--auth-admins", "al/ice:read=" + aliceTok}, `auth.admins[0] name: "al/ice" contains '/'`},
		{"duplicate name", []string{"--auth-admins", "alice:read=" + aliceTok + ",alice:admin=" + bobTok}, "auth.admins[1] (alice): the name repeats item 0"},
		{"the name of auth.admin_token", []string{"--auth-admin-token", adminTok, "--auth-admins", "admin:read=" + aliceTok}, "auth.admins[0] (admin): the name admin is auth.admin_token's"},
		{"duplicate token", []string{"--auth-admins", "alice:read=" + aliceTok + ",bob:admin=" + aliceTok}, "auth.admins[1] (bob): the token repeats another admin's (item 0)"},
		{"the admin token", []string{"--auth-admin-token", adminTok, "--auth-admins", "alice:read=" + adminTok}, "auth.admins[0] (alice): the token is auth.admin_token"},
		{"an edge's token", []string{"--auth-admins", "alice:operate=" + edgeTok}, "auth.admins[0] (alice): the token is an edge's (auth.edges[0]); an admin's token must open the admin API only"},
		{"weak token", []string{"--auth-admins", "alice:read=short"}, "auth.admins[0] (alice): token shorter than 16 characters"},
		{"placeholder token", []string{"--auth-admins", "alice:admin=replace-with-a-token-of-your-own"}, "auth.admins[0] (alice): the token is the shipped example value"},
		{"certificate without tls.ca", []string{"--auth-admins", "carol:read"}, "auth.admins[0] (carol): no token, and tls.ca is not set to verify its client certificate"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := load(t, append(append([]string{}, base...), c.args...)...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Load(%v) = %v, want an error containing %q", c.args, err, c.want)
			}
			if err != nil && (strings.Contains(err.Error(), aliceTok) || strings.Contains(err.Error(), bobTok)) {
				t.Fatalf("the error shows a token: %v", err)
			}
		})
	}
	// A certificate is one credential: an edge's certificate or a reader's is not also an admin's.
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"an edge's certificate", []string{"--auth-client-certs", "--auth-edges", "edge-us-1@us", "--auth-admins", "edge-us-1:read"}, "auth.admins[0] (edge-us-1): the certificate of edge-us-1 is bound to an edge (auth.edges); an edge's certificate does not open the admin API"},
		{"a reader's certificate", []string{"--auth-readers", "carol", "--auth-admins", "carol:operate"}, "auth.admins[0] (carol): carol is in auth.readers too: one name is one admin"},
		{"a reader's name on a token", []string{"--auth-readers", "carol", "--auth-admins", "carol:operate=" + aliceTok}, "auth.admins[0] (carol): carol is in auth.readers too: one name is one admin"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := load(t, append(append(append([]string{}, base...), tlsArgs(t)...), c.args...)...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Load(%v) = %v, want an error containing %q", c.args, err, c.want)
			}
		})
	}
}

// TestLoad_WarnsOfAdminTokensGivenAsAFlag: tokens in --auth-admins show in ps, as the admin
// token's flag does; certificate entries carry no secret and get no warning.
func TestLoad_WarnsOfAdminTokensGivenAsAFlag(t *testing.T) {
	base := append([]string{"--node-id", "c1", "--data-dir", "/tmp/d", "--auth-edge-tokens", edgeTok}, tlsArgs(t)...)
	for args, want := range map[string]bool{"alice:read=" + aliceTok: true, "carol:read": false} {
		c, err := load(t, append(append([]string{}, base...), "--auth-admins", args)...)
		if err != nil {
			t.Fatal(err)
		}
		got := slices.ContainsFunc(c.Warnings, func(w string) bool {
			return strings.HasPrefix(w, "--auth-admins: the admins' tokens given as a flag show in ps")
		})
		if got != want {
			t.Errorf("--auth-admins %s: warnings %q, want a warning of ps: %t", strings.SplitN(args, "=", 2)[0], c.Warnings, want)
		}
	}
}
