// SPDX-License-Identifier: Apache-2.0

package updates

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"

	updater "github.com/choria-io/go-updater"
)

// TestRepo_GoUpdaterInstallsPublishedRelease uses go-updater itself, as the provision agent's
// release_update does, to replace a file with the published release.
func TestRepo_GoUpdaterInstallsPublishedRelease(t *testing.T) {
	dir := t.TempDir()
	repo, err := Start(filepath.Join(dir, "repo"), filepath.Join(dir, "cache"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Stop(context.Background()) })

	release := make([]byte, 3<<20)
	if _, err := rand.Read(release); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "new-binary")
	if err := os.WriteFile(src, release, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := repo.Add("1.2.3", src); err != nil {
		t.Fatalf("publish: %v", err)
	}

	target := filepath.Join(dir, "installed")
	if err := os.WriteFile(target, []byte("old"), 0o755); err != nil {
		t.Fatal(err)
	}
	err = updater.Apply(updater.TargetFile(target), updater.SourceRepo(repo.URL()), updater.Version("1.2.3"))
	if err != nil {
		t.Fatalf("go-updater apply: %v", err)
	}
	got, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, release) {
		t.Fatalf("installed %d bytes, not the published release (%d bytes)", len(got), len(release))
	}

	// a second publication of the same binary comes from the cache and installs the same
	if err := repo.Add("1.2.4", src); err != nil {
		t.Fatalf("publish from cache: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "cache")); len(entries) != 1 {
		t.Fatalf("cache holds %d entries, want 1", len(entries))
	}
	if err := os.WriteFile(target, []byte("old"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := updater.Apply(updater.TargetFile(target), updater.SourceRepo(repo.URL()), updater.Version("1.2.4")); err != nil {
		t.Fatalf("go-updater apply of cached release: %v", err)
	}
	if got, _ := os.ReadFile(target); !bytes.Equal(got, release) {
		t.Fatal("cached release installed different bytes")
	}

	err = updater.Apply(updater.TargetFile(target), updater.SourceRepo(repo.URL()), updater.Version("9.9.9"))
	if err == nil {
		t.Fatal("go-updater installed a version the repository does not have")
	}
}

func TestRepo_AddRefusesEmptyVersionAndMissingBinary(t *testing.T) {
	repo, err := Start(t.TempDir(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Stop(context.Background()) })
	if err := repo.Add("", "/bin/true"); err == nil {
		t.Fatal("empty version accepted")
	}
	if err := repo.Add("1.0.0", filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("missing binary accepted")
	}
}
