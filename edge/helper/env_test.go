// SPDX-License-Identifier: Apache-2.0

package helper_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed96588659/muster/edge/helper"
	"github.com/seed96588659/muster/pkg/testkit"
)

// edgeSecrets are what an edge holds: the provisioning token, the broker password, a pause
// token, a coordinator token. Some are short, far below the length the patterns hide.
var edgeSecrets = []string{"tok9", "hunter2", "pause-me", "c00rd"}

// TestExec_StderrHidesTheConfiguredSecretsWhateverTheirLength: a helper that echoes the
// edge's secrets (it gets the token inside the provisioning JWT's claims) has them hidden by value.
func TestExec_StderrHidesTheConfiguredSecretsWhateverTheirLength(t *testing.T) {
	dir := t.TempDir()
	cmd := script(t, dir, "echo.sh", `cat >/dev/null
echo "token=tok9 password hunter2, pause:pause-me coordinator c00rd." >&2
echo '{}'
`)
	log, buf := testkit.NewLogger()
	e := newExec(t, helper.Options{Command: cmd, Logger: log, Secrets: edgeSecrets})
	if _, err := e.Run(context.Background(), &helper.Request{Identity: "n1"}); err != nil {
		t.Fatal(err)
	}
	checkHidden(t, buf.String(), "token=[redacted] password [redacted], pause:[redacted] coordinator [redacted].")
}

// TestPersistent_StderrAndErrorLinesHideTheConfiguredSecrets: the line logger and an error
// answer of a persistent helper hide them too.
func TestPersistent_StderrAndErrorLinesHideTheConfiguredSecrets(t *testing.T) {
	dir := t.TempDir()
	cmd := script(t, dir, "echo.sh", shID+`while IFS= read -r line; do
  rid "$line"
  echo "token=tok9 password hunter2" >&2
  printf '{"id":%s,"error":"CMDB refused pause-me and c00rd"}\n' "$id"
done
`)
	log, buf := testkit.NewLogger()
	p, err := helper.NewPersistent(helper.Options{Command: cmd, Logger: log, Secrets: edgeSecrets})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = p.Run(context.Background(), &helper.Request{Identity: "n1"})
	if !errors.Is(err, helper.ErrFailed) {
		t.Fatalf("error %v, want ErrFailed", err)
	}
	checkHidden(t, err.Error(), "CMDB refused [redacted] and [redacted]")
	waitLog(t, buf, "password")
	checkHidden(t, buf.String(), "token=[redacted] password [redacted]")
}

func checkHidden(t *testing.T, text, want string) {
	t.Helper()
	for _, s := range edgeSecrets {
		if strings.Contains(text, s) {
			t.Errorf("secret %q leaked: %s", s, text)
		}
	}
	if !strings.Contains(text, want) {
		t.Errorf("want %q in: %s", want, text)
	}
}

// TestRunners_HelperGetsAMinimalEnvironment: the helper sees PATH, HOME, the locale, TZ,
// TMPDIR and the variables it was given, never the edge's other variables (its tokens among them).
func TestRunners_HelperGetsAMinimalEnvironment(t *testing.T) {
	t.Setenv("MUSTER_EDGE_TOKEN", "provisioning-token")
	t.Setenv("MUSTER_EDGE_COORDINATOR_TOKEN", "coordinator-token")
	t.Setenv("MUSTER_COORDINATOR_ADMIN_TOKEN", "admin-token")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
	t.Setenv("HOME", "/home/edge")
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("LC_ALL", "C")
	t.Setenv("TZ", "UTC")
	t.Setenv("TMPDIR", os.TempDir())
	t.Setenv("CMDB_URL", "https://cmdb.example.net")
	want := []string{"PATH=" + os.Getenv("PATH"), "HOME=/home/edge", "LANG=C.UTF-8", "LC_ALL=C", "TZ=UTC", "TMPDIR=" + os.TempDir(), "CMDB_URL=https://cmdb.example.net"}
	refused := []string{"MUSTER_", "aws-secret", "provisioning-token"}

	for name, persistent := range map[string]bool{"exec": false, "persistent": true} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			envFile := filepath.Join(dir, "env")
			body := "cat >/dev/null\necho '{}'\n"
			if persistent {
				body = shID + "while IFS= read -r line; do rid \"$line\"; printf '{\"id\":%s}\\n' \"$id\"; done\n"
			}
			cmd := script(t, dir, "env.sh", `env > "`+envFile+`"`+"\n"+body)
			opts := helper.Options{Command: cmd, Environment: []string{"CMDB_URL"}}
			var r helper.Runner
			var err error
			if persistent {
				r, err = helper.NewPersistent(opts)
			} else {
				r, err = helper.NewExec(opts)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if _, err := r.Run(context.Background(), &helper.Request{Identity: "n1"}); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(envFile)
			if err != nil {
				t.Fatal(err)
			}
			env := string(data)
			for _, w := range want {
				if !strings.Contains("\n"+env, "\n"+w+"\n") {
					t.Errorf("helper environment lacks %s (it holds %s)", w, names(env))
				}
			}
			for _, r := range refused {
				if strings.Contains(env, r) {
					t.Errorf("helper environment holds %q (it holds %s)", r, names(env))
				}
			}
		})
	}
}

// names lists the variables of env's lines, leaving their values out of the test's output.
func names(env string) string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(env), "\n") {
		name, _, _ := strings.Cut(line, "=")
		out = append(out, name)
	}
	return strings.Join(out, " ")
}
