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
	root string
	srv  *http.Server
	url  string
	log  *slog.Logger
}

// Start serves root over HTTP on 127.0.0.1 on a free port.
func Start(root string, log *slog.Logger) (*Repo, error) {
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
	r := &Repo{root: root, log: log, url: "http://" + l.Addr().String()}
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
	in, err := os.Open(binary)
	if err != nil {
		return fmt.Errorf("publish release %s: %w", version, err)
	}
	defer in.Close()
	tmp := filepath.Join(dir, binaryFile+".tmp")
	out, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("publish release %s: %w", version, err)
	}
	defer os.Remove(tmp)
	bz, err := bzip2.NewWriter(out, &bzip2.WriterConfig{Level: bzip2.BestSpeed})
	if err != nil {
		out.Close()
		return fmt.Errorf("publish release %s: %w", version, err)
	}
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(bz, h), in); err != nil {
		out.Close()
		return fmt.Errorf("compress release %s: %w", version, err)
	}
	if err := bz.Close(); err != nil {
		out.Close()
		return fmt.Errorf("compress release %s: %w", version, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("publish release %s: %w", version, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, binaryFile)); err != nil {
		return fmt.Errorf("publish release %s: %w", version, err)
	}
	spec, err := json.Marshal(release{Binary: binaryFile, Hash: hex.EncodeToString(h.Sum(nil))})
	if err != nil {
		return fmt.Errorf("publish release %s: %w", version, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "release.json"), spec, 0o644); err != nil {
		return fmt.Errorf("publish release %s: %w", version, err)
	}
	r.log.Info("release published", "version", version, "os", goos, "arch", goarch)
	return nil
}

// Stop shuts the HTTP server down.
func (r *Repo) Stop(ctx context.Context) error {
	if err := r.srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("stop updates repo: %w", err)
	}
	return nil
}
