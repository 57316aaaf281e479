// SPDX-License-Identifier: Apache-2.0

// Package previous builds muster-coordinator and muster-edge as they were at Commit, the last
// commit of this repository at the cluster protocol before the current one: the rolling upgrade
// test (sandbox/upgradesuite) and the chaos suite's rolling-upgrade fault start from it.
package previous

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/seed96588659/muster/pkg/gobuild"
)

// Commit is the last commit at the cluster protocol before this build's (7; this build applies
// 8). The commit that raises ledger.Protocol again moves it to the last commit before that raise.
const Commit = "aaca9e501be5cfdae977f93e9b836e1985163bb2"

// Binaries names the built programs.
const (
	Coordinator = "muster-coordinator"
	Edge        = "muster-edge"
)

// Build returns a directory holding Commit's muster-coordinator (built with tags) and
// muster-edge, built from the git history of the repository at root (a `git archive`, which
// leaves the repository as it is) unless cacheDir already holds them. The directory is named by
// the commit and the tags, so packages that run at once share one build. A clone without the
// commit (a shallow one) is an error that says how to fetch it: the test must not pass without
// the old build.
func Build(ctx context.Context, root, cacheDir string, tags ...string) (string, error) {
	if err := hasCommit(ctx, root); err != nil {
		return "", err
	}
	name := Commit
	if len(tags) > 0 {
		name += "+" + strings.Join(tags, "+")
	}
	dir := filepath.Join(cacheDir, name)
	if ok, err := complete(dir); err != nil || ok {
		return dir, err
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", fmt.Errorf("previous build: %w", err)
	}
	work, err := os.MkdirTemp(cacheDir, ".build-")
	if err != nil {
		return "", fmt.Errorf("previous build: %w", err)
	}
	defer os.RemoveAll(work)
	src, bin := filepath.Join(work, "src"), filepath.Join(work, "bin")
	if err := extract(ctx, root, src); err != nil {
		return "", err
	}
	var tagArgs []string
	if len(tags) > 0 {
		tagArgs = []string{"-tags", strings.Join(tags, ",")}
	}
	if err := gobuild.Build(ctx, filepath.Join(src, "coordinator"), append(tagArgs, "-o", filepath.Join(bin, Coordinator), "./cmd/muster-coordinator")...); err != nil {
		return "", fmt.Errorf("previous build of %s: %w", Commit, err)
	}
	if err := gobuild.Build(ctx, filepath.Join(src, "edge"), "-o", filepath.Join(bin, Edge), "./cmd/muster-edge"); err != nil {
		return "", fmt.Errorf("previous build of %s: %w", Commit, err)
	}
	// A rename is atomic: another package building at the same time either finds nothing or a
	// whole directory; the loser of the race keeps the winner's.
	if err := os.Rename(bin, dir); err != nil {
		if ok, cerr := complete(dir); cerr == nil && ok {
			return dir, nil
		}
		return "", fmt.Errorf("previous build: %w", err)
	}
	return dir, nil
}

// CacheDir is where Build keeps its binaries by default: the user's cache directory, or the
// temporary one when there is none.
func CacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "muster-sandbox", "previous")
}

// complete reports whether dir holds both binaries.
func complete(dir string) (bool, error) {
	for _, b := range []string{Coordinator, Edge} {
		if _, err := os.Stat(filepath.Join(dir, b)); errors.Is(err, os.ErrNotExist) {
			return false, nil
		} else if err != nil {
			return false, fmt.Errorf("previous build: %w", err)
		}
	}
	return true, nil
}

// hasCommit fails, saying how to fix it, when root's git history lacks Commit.
func hasCommit(ctx context.Context, root string) error {
	cmd := exec.CommandContext(ctx, "git", "-C", root, "cat-file", "-e", Commit+"^{commit}")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("previous build: commit %s (the last at the previous cluster protocol) is not in the git history of %s (%v: %s); "+
			"a shallow clone lacks it: fetch the full history (git fetch --unshallow)", Commit, root, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// extract writes the modules of Commit's tree under dst.
func extract(ctx context.Context, root, dst string) error {
	var out, stderr bytes.Buffer
	// The modules the binaries are built from; each finds the others by its replace directives.
	cmd := exec.CommandContext(ctx, "git", "-C", root, "archive", "--format=tar", Commit, "pkg", "coordinator", "edge")
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("previous build: git archive %s: %w: %s", Commit, err, strings.TrimSpace(stderr.String()))
	}
	tr := tar.NewReader(&out)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("previous build: read archive: %w", err)
		}
		p := filepath.Join(dst, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(p, filepath.Clean(dst)+string(filepath.Separator)) {
			return fmt.Errorf("previous build: archive entry %q leaves %s", h.Name, dst)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			err = writeFile(p, tr, os.FileMode(h.Mode).Perm())
		case tar.TypeSymlink:
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				err = os.Symlink(h.Linkname, p)
			}
		}
		if err != nil {
			return fmt.Errorf("previous build: extract %s: %w", h.Name, err)
		}
	}
}

func writeFile(p string, r io.Reader, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
