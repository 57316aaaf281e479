// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/seed96588659/muster/coordinator"
)

// TestNew_MakesTheDataDirectoryPrivate: the data directory holds the ledger, the Raft log and
// snapshots (every node's facts, lease tokens); one that already existed as 0755 is made 0700.
func TestNew_MakesTheDataDirectoryPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	svc, err := coordinator.New(coordinator.Config{ID: "c1", DataDir: dir, RaftBind: "127.0.0.1:0", Bootstrap: true, LedgerNoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o700 {
		t.Fatalf("data directory is %v, want 0700", st.Mode().Perm())
	}
}
