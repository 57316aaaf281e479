// SPDX-License-Identifier: Apache-2.0

package testkit

import (
	"os"
	"strings"
	"testing"
)

// IsolateEnv clears every environment variable whose name starts with prefix and points HOME at
// an empty directory, for the rest of the test, so neither the caller's environment nor a user
// configuration on the machine reaches what the test loads.
func IsolateEnv(t testing.TB, prefix string) {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, prefix) {
			t.Setenv(name, "")
		}
	}
}
