// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A named --dir that is not empty is refused before anything runs, and nothing in it is touched:
// a passing run removes its work directory, which must never be one the operator's files share.
func TestChaos_ANamedDirThatIsNotEmptyIsRefusedAndKept(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(mine, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := run("chaos", "--dir", dir, "--rounds", "0")
	if err == nil || !strings.Contains(err.Error(), "--dir") || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("error %v, want it to say --dir is not empty", err)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Fatalf("the operator's file is gone: %v", err)
	}
}

// A named --dir that does not exist yet is made, as a fresh one should be.
func TestChaos_ANamedDirThatDoesNotExistIsMade(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "lab")
	f := &chaosFlags{dir: dir}
	got, owned, err := chaosDir(f)
	if err != nil {
		t.Fatalf("chaosDir: %v", err)
	}
	if owned {
		t.Errorf("a named directory is the operator's: it must not be removed")
	}
	if st, err := os.Stat(got); err != nil || !st.IsDir() {
		t.Fatalf("%s was not made: %v", got, err)
	}
}
