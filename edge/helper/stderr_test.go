// SPDX-License-Identifier: Apache-2.0

package helper

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func newTestLogger() (*slog.Logger, *bytes.Buffer) {
	var b bytes.Buffer
	return slog.New(slog.NewTextHandler(&b, nil)), &b
}

// Standard base64 has '/': a 32-byte key or token written that way is as secret as one in
// base64url, so a long run with '/' in it is redacted whole.
func TestRedact_StandardBase64WithSlashIsHidden(t *testing.T) {
	for _, secret := range []string{
		"q1w2E3r4T5y6U7i8O9p0/A1s2D3f4G5h6J7k8L9z0X1c=",                // 32-byte key, std base64
		"token=Zm9vYmFyYmF6cXV4/cXV1eGNvcmdlZ3JhdWx0+Z2FycGx5d2FsZG8=", // key=value, '+' and '/'
		"/q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8L9z0X1c=",                // a key that starts with '/'
		"q1/w2/E3/r4/T5/y6/U7/i8/O9/p0/A1/s2/D3/f4/G5/h6/J7k8",         // many '/', every piece short
		"/etc/keys/q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8L9z0X1c",        // a key behind a path
	} {
		got := redact("helper: using key " + secret + " now")
		if got != "helper: using key [redacted] now" {
			t.Errorf("redact(%q) = %q", secret, got)
		}
	}
}

// A path carries no secret: one in a helper's error message still reads, however long, unless
// one of its segments is itself a long opaque run (a hex token in a URL path).
func TestRedact_PathsStillRead(t *testing.T) {
	for _, line := range []string{
		"open /etc/choria/ssl/x.pem: no such file or directory",
		"read /var/lib/muster/helpers/provisioning-helper-for-the-datacenter/config.json: permission denied",
		"exec: /usr/local/libexec/choria/provisioner/helpers/site_helper_v2: not found",
		"GET https://cmdb.example.net/api/v1/regions/eu-west-1/nodes/node-00001/facts: 503",
		"level=ERROR msg=\"no facts\" file=/srv/cmdb/exports/region-eu-west-1/provisioning/facts.json",
		"loading helpers/provisioning/region-eu-west-1/templates/default_node_facts.yaml",
	} {
		if got := redact(line); got != line {
			t.Errorf("redact(%q) = %q, want it unchanged", line, got)
		}
	}
	line := "GET /api/v1/tokens/0123456789abcdef0123456789abcdef0123456789abcdef/check"
	want := "GET /api/v1/tokens/[redacted]/check"
	if got := redact(line); got != want {
		t.Errorf("redact(%q) = %q, want %q", line, got, want)
	}
}

// The persistent helper's line logger applies the same rule.
func TestLineLogger_StandardBase64WithSlashIsHidden(t *testing.T) {
	log, buf := newTestLogger()
	l := &lineLogger{log: log, helper: "h", redact: func(s string, _ bool) string { return redact(s) }}
	secret := "q1w2E3r4T5y6U7i8O9p0/A1s2D3f4G5h6J7k8L9z0X1c="
	_, _ = l.Write([]byte("using key " + secret + "\nopen /etc/choria/ssl/x.pem: denied\n"))
	logged := buf.String()
	if strings.Contains(logged, "A1s2D3f4G5h6") || !strings.Contains(logged, "[redacted]") {
		t.Errorf("key not redacted: %s", logged)
	}
	if !strings.Contains(logged, "/etc/choria/ssl/x.pem") {
		t.Errorf("path not readable: %s", logged)
	}
}

// A secret that holds another is hidden whole, and the start of a secret where captured output
// was cut is hidden too.
func TestSecretValues_OverlappingAndCutSecrets(t *testing.T) {
	s := newSecretValues([]string{"pw", "", "pw-long-version", "pw"})
	for _, tc := range []struct {
		text string
		cut  bool
		want string
	}{
		{"a pw-long-version and a pw", false, "a [redacted] and a [redacted]"},
		{"ends with pw-lo", true, "ends with [redacted]"},
		{"ends with pw-lo", false, "ends with [redacted]-lo"},
		{"ends with p", true, "ends with [redacted]"},
		{"nothing here", true, "nothing here"},
	} {
		if got := s.hide(tc.text, tc.cut); got != tc.want {
			t.Errorf("hide(%q, cut=%v) = %q, want %q", tc.text, tc.cut, got, tc.want)
		}
	}
	if got := newSecretValues(nil).hide("pw", true); got != "pw" {
		t.Errorf("no secrets: %q", got)
	}
}
