// SPDX-License-Identifier: Apache-2.0

package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"

	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/pkg/testkit"
)

// isolate clears every MUSTER_EDGE_ variable and points HOME at an empty directory, so neither
// the caller's environment nor a Choria user configuration on the machine reaches a test.
func isolate(t *testing.T) {
	t.Helper()
	testkit.IsolateEnv(t, config.EnvPrefix+"_")
}

// writeFile writes text to a new file in a test directory and returns its path.
func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// flags returns a flag set declared by BindFlags and parsed from args.
func flags(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("muster-edge", pflag.ContinueOnError)
	config.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	return fs
}

// fieldKeys lists the keys of every FieldError in err, in order.
func fieldKeys(err error) []string {
	switch x := err.(type) {
	case *config.FieldError:
		return []string{x.Key}
	case interface{ Unwrap() []error }:
		var out []string
		for _, e := range x.Unwrap() {
			out = append(out, fieldKeys(e)...)
		}
		return out
	case interface{ Unwrap() error }:
		return fieldKeys(x.Unwrap())
	}
	return nil
}
