// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// execute runs muster-edge with args and returns its error's text.
func execute(t *testing.T, args ...string) string {
	t.Helper()
	cmd := root()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	if err == nil {
		t.Fatalf("muster-edge %s succeeded:\n%s", strings.Join(args, " "), out.String())
	}
	return err.Error()
}

// TestPlan_BadFlagsAreNamed: each flag mistake is refused before anything connects, naming the
// flag.
func TestPlan_BadFlagsAreNamed(t *testing.T) {
	file := filepath.Join(t.TempDir(), "edge.yaml")
	if err := os.WriteFile(file, []byte("site: eu\nhelper: /bin/true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"plan", "--config", file, "--helper", "/usr/local/bin/new-helper"}, `plan takes no arguments, got "/usr/local/bin/new-helper" (to ask another helper, join it to the flag: --helper='COMMAND ARGS')`},
		{[]string{"plan", "--config", file, "--helper="}, "--helper: empty command"},
		{[]string{"plan", "--config", file, "--reader-cert", "r.pem"}, "--reader-cert and --reader-key: give both or neither"},
		{[]string{"plan", "--config", file, "--workers", "3"}, "unknown flag: --workers"},
		{[]string{"plan", "--config", file, "--json=maybe"}, `invalid argument "maybe" for "--json"`},
		{[]string{"plan", "--config", filepath.Join(t.TempDir(), "missing.yaml")}, "missing.yaml"},
	}
	for _, c := range cases {
		if got := execute(t, c.args...); !strings.Contains(got, c.want) {
			t.Errorf("muster-edge %s: %q, want it to contain %q", strings.Join(c.args, " "), got, c.want)
		}
	}
}
