// SPDX-License-Identifier: Apache-2.0

package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLoad_WarnsWhatClientCertsLetActAsAnEdge: auth.client_certs beside edges bound by token
// only lets no certificate act as an edge (an operator who turned it on for the status page gets
// told what the page needs instead), and with no edge bound at all every certificate of tls.ca
// acts as any edge: each gets one warning naming the key. Certificates bound in auth.edges get none.
func TestLoad_WarnsWhatClientCertsLetActAsAnEdge(t *testing.T) {
	dir := t.TempDir()
	tls := []string{"--tls-cert", filepath.Join(dir, "c.pem"), "--tls-key", filepath.Join(dir, "c.key"), "--tls-ca", filepath.Join(dir, "ca.pem")}
	for _, f := range []string{"c.pem", "c.key", "ca.pem"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	base := append([]string{"--node-id", "c1", "--data-dir", "/tmp/d", "--http-advertise", "https://127.0.0.1:8000", "--auth-client-certs"}, tls...)
	for _, c := range []struct {
		name string
		args []string
		want string // "" for no warning about auth.client_certs
	}{
		{"edges bound by token only", []string{"--auth-edges", "edge-eu-1@eu=" + edgeTok, "--auth-readers", "alice-statuspage"},
			"auth.client_certs: no auth.edges item binds a certificate (EDGE@REGION without a token), so no client certificate acts as an edge: it opens nothing; a status page needs its certificate's name in auth.readers"},
		{"no edge bound", []string{"--auth-edge-tokens", edgeTok},
			"auth.client_certs: no auth.edges item binds an edge, so every certificate tls.ca signed acts as any edge in any region (except those named in auth.readers)"},
		{"edges bound by certificate", []string{"--auth-edges", "edge-eu-1@eu", "--auth-edges", "edge-us-1@us=" + edgeTok}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := load(t, append(append([]string{}, base...), c.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			got := slices.IndexFunc(cfg.Warnings, func(w string) bool { return strings.HasPrefix(w, KeyClientCerts) })
			switch {
			case c.want == "" && got >= 0:
				t.Errorf("warned %q, want no warning about %s", cfg.Warnings[got], KeyClientCerts)
			case c.want != "" && (got < 0 || !strings.HasPrefix(cfg.Warnings[got], c.want)):
				t.Errorf("warnings %q, want one beginning %q", cfg.Warnings, c.want)
			}
		})
	}
}
