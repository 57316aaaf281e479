// SPDX-License-Identifier: Apache-2.0

// Package updates serves a go-updater repository on loopback:
// <repo>/<version>/<os>/<arch>/release.json naming a bzip2-compressed binary beside it, so the
// real provision agent's release_update downloads, verifies and installs it.
package updates

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/dsnet/compress/bzip2"
)

// binaryFile is the compressed binary's name inside a release directory.
const binaryFile = "muster-sandbox.bz2"

// release is go-updater's release.json: binary is relative to the release directory, hash
// the sha256 of the uncompressed binary.
type release struct {
	Binary string `json:"binary"`
	Hash   string `json:"hash"`
}

// Repo is a running updates repository.
type Repo struct {
	root  string
	cache string
	srv   *http.Server
	url   string
	log   *slog.Logger
}

// Start serves root over HTTP on 127.0.0.1 on a free port. cache, when not empty, keeps
// compressed releases across repositories (see compressed).
func Start(root, cache string, log *slog.Logger) (*Repo, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("updates repo dir: %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("updates repo listen: %w", err)
	}
	r := &Repo{root: root, cache: cache, log: log, url: "http://" + l.Addr().String()}
	r.srv = &http.Server{Handler: http.FileServer(http.Dir(root)), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := r.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("updates repo stopped", "error", err)
		}
	}()
	return r, nil
}

// URL is the repository URL to pass as release_update's repository.
func (r *Repo) URL() string { return r.url }

// Root is the directory served.
func (r *Repo) Root() string { return r.root }

// Add publishes binary as version for this machine's OS and architecture.
func (r *Repo) Add(version, binary string) error {
	return r.AddFor(version, runtime.GOOS, runtime.GOARCH, binary)
}

// AddFor publishes binary as version for goos/goarch.
func (r *Repo) AddFor(version, goos, goarch, binary string) error {
	if version == "" {
		return errors.New("publish release: empty version")
	}
	dir := filepath.Join(r.root, version, goos, goarch)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("publish release %s: %w", version, err)
	}
	sum, err := fileSHA256(binary)
	if err != nil {
		return fmt.Errorf("publish release %s: %w", version, err)
	}
	target := filepath.Join(dir, binaryFile)
	if err := r.compressed(binary, sum, target); err != nil {
		return fmt.Errorf("publish release %s: %w", version, err)
	}
	spec, err := json.Marshal(release{Binary: binaryFile, Hash: sum})
	if err != nil {
		return fmt.Errorf("publish release %s: %w", version, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "release.json"), spec, 0o644); err != nil {
		return fmt.Errorf("publish release %s: %w", version, err)
	}
	r.log.Info("release published", "version", version, "os", goos, "arch", goarch)
	return nil
}

// compressed writes binary, bzip2-compressed, to target. Compressing a 60 MB binary takes
// seconds, so with a cache directory the result is kept there under the binary's sha256 and
// reused by later labs.
func (r *Repo) compressed(binary, sum, target string) error {
	if r.cache == "" {
		return compressFile(binary, target)
	}
	cached := filepath.Join(r.cache, sum+".bz2")
	if _, err := os.Stat(cached); err != nil {
		if err := os.MkdirAll(r.cache, 0o755); err != nil {
			return fmt.Errorf("release cache: %w", err)
		}
		if err := compressFile(binary, cached); err != nil {
			return err
		}
		pruneCache(r.cache, cacheKeep)
	} else {
		now := time.Now()
		_ = os.Chtimes(cached, now, now)
	}
	if err := os.Link(cached, target); err == nil {
		return nil
	}
	return copyFile(cached, target)
}

// cacheKeep is how many compressed releases the cache keeps (each build of the binary adds one).
const cacheKeep = 4

// pruneCache removes all but the keep most recently used entries.
func pruneCache(dir string, keep int) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type entry struct {
		path string
		used time.Time
	}
	var all []entry
	for _, e := range entries {
		if info, err := e.Info(); err == nil && strings.HasSuffix(e.Name(), ".bz2") {
			all = append(all, entry{filepath.Join(dir, e.Name()), info.ModTime()})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].used.After(all[j].used) })
	for i := keep; i < len(all); i++ {
		_ = os.Remove(all[i].path)
	}
}

// fileSHA256 is the hex sha256 of a file, as go-updater checks it after decompressing.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("hash: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// compressFile bzip2-compresses src into dst through a temporary file.
func compressFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("compress: %w", err)
	}
	defer in.Close()
	out, err := os.CreateTemp(filepath.Dir(dst), ".release-*")
	if err != nil {
		return fmt.Errorf("compress %s: %w", src, err)
	}
	defer os.Remove(out.Name())
	bz, err := bzip2.NewWriter(out, &bzip2.WriterConfig{Level: bzip2.BestSpeed})
	if err != nil {
		out.Close()
		return fmt.Errorf("compress %s: %w", src, err)
	}
	if _, err := io.Copy(bz, in); err != nil {
		out.Close()
		return fmt.Errorf("compress %s: %w", src, err)
	}
	if err := bz.Close(); err != nil {
		out.Close()
		return fmt.Errorf("compress %s: %w", src, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("compress %s: %w", src, err)
	}
	if err := os.Rename(out.Name(), dst); err != nil {
		return fmt.Errorf("compress %s: %w", src, err)
	}
	return nil
}

// copyFile copies the cached release where a hard link is not possible (another file system).
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copy release: %w", err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return fmt.Errorf("copy release: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy release to %s: %w", dst, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("copy release to %s: %w", dst, err)
	}
	return nil
}

// Stop shuts the HTTP server down.
func (r *Repo) Stop(ctx context.Context) error {
	if err := r.srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("stop updates repo: %w", err)
	}
	return nil
}
