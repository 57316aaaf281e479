// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/seed96588659/muster/sandbox/fleet/broker"
	"github.com/seed96588659/muster/sandbox/fleet/pki"
	"github.com/seed96588659/muster/sandbox/fleet/realnode"
	"github.com/seed96588659/muster/sandbox/fleet/recorder"
	"github.com/seed96588659/muster/sandbox/fleet/updates"
	"github.com/seed96588659/muster/sandbox/internal/atomicfile"
)

// Lab is a running sandbox.
type Lab struct {
	opts    Options
	dir     string
	rec     *recorder.Recorder
	ca      *pki.CA
	signer  *pki.Signer
	repo    *updates.Repo
	regions []*Region
	lock    *dirLock

	stopOnce sync.Once
	stopErr  error
}

// Start builds and starts the lab. Only infrastructure failures (directory, recorder, broker,
// updates repository, emulated fleet) fail it; a real node that cannot start is logged, listed
// in lab.json and Region.Failed, and the rest of the lab runs. It removes any previous
// DIR/actions.jsonl and node directories.
func Start(ctx context.Context, opts Options) (*Lab, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("lab dir: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("lab dir: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	l := &Lab{opts: opts, dir: dir, lock: lock}
	ok := false
	defer func() {
		if !ok {
			_ = l.Stop()
		}
	}()

	actions := l.ActionsFile()
	if err := os.Remove(actions); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reset action log: %w", err)
	}
	if l.rec, err = recorder.Open(actions, opts.Logger); err != nil {
		return nil, err
	}
	if l.ca, err = pki.NewCA(filepath.Join(dir, "pki")); err != nil {
		return nil, err
	}
	if l.signer, err = pki.NewSigner(filepath.Join(dir, "pki")); err != nil {
		return nil, err
	}
	if l.repo, err = updates.Start(filepath.Join(dir, "updates"), opts.ReleaseCache, opts.Logger); err != nil {
		return nil, err
	}
	binaries, err := l.versionedBinaries()
	if err != nil {
		return nil, err
	}
	// compressing the release takes seconds: do it while brokers and nodes start
	published := make(chan error, 1)
	if up, found := binaries[opts.UpgradeVersion]; found {
		go func() { published <- l.repo.Add(opts.UpgradeVersion, up) }()
	} else {
		published <- nil
	}
	waitPublished := sync.OnceValue(func() error { return <-published })
	defer func() {
		if !ok {
			_ = waitPublished()
		}
	}()

	for _, name := range opts.Regions {
		r, err := l.startRegion(ctx, name)
		if r != nil {
			l.regions = append(l.regions, r)
		}
		if err != nil {
			return nil, err
		}
	}

	// real nodes of every region start together, then each is awaited
	for _, r := range l.regions {
		r.launchReal(binaries)
	}
	for _, r := range l.regions {
		if err := r.startEmulated(ctx); err != nil {
			return nil, err
		}
	}
	for _, r := range l.regions {
		r.awaitReal(ctx, opts.StartTimeout)
		r.superviseReentries()
	}
	if err := waitPublished(); err != nil {
		return nil, err
	}
	if err := l.writeInfo(); err != nil {
		return nil, err
	}
	ok = true
	return l, nil
}

// versionedBinaries writes one node binary per version needed and publishes the upgrade.
func (l *Lab) versionedBinaries() (map[string]string, error) {
	out := map[string]string{}
	if l.opts.NodeBinary == "" {
		return out, nil
	}
	if _, err := os.Stat(l.opts.NodeBinary); err != nil {
		return nil, fmt.Errorf("node binary: %w", err)
	}
	versions := []string{l.opts.BaseVersion, l.opts.UpgradeVersion}
	versions = append(versions, l.opts.Versions...)
	binDir := filepath.Join(l.dir, "bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return nil, fmt.Errorf("lab bin dir: %w", err)
	}
	for _, v := range versions {
		if _, done := out[v]; done {
			continue
		}
		p := filepath.Join(binDir, "muster-sandbox-"+v)
		if err := realnode.WriteVersionedBinary(l.opts.NodeBinary, p, v); err != nil {
			return nil, err
		}
		out[v] = p
	}
	return out, nil
}

func (l *Lab) startRegion(ctx context.Context, name string) (*Region, error) {
	rdir := filepath.Join(l.dir, name)
	if err := os.RemoveAll(filepath.Join(rdir, "nodes")); err != nil {
		return nil, fmt.Errorf("region %s: reset node dirs: %w", name, err)
	}
	b, err := broker.Start(ctx, broker.Options{Dir: filepath.Join(rdir, "broker"), Region: name, CA: l.ca, Signer: l.signer, Logger: l.opts.Logger,
		Streams: l.opts.Streams, ElectionTTL: l.opts.ElectionTTL})
	if err != nil {
		return nil, fmt.Errorf("region %s: %w", name, err)
	}
	r := &Region{name: name, dir: rdir, lab: l, failed: map[string]string{}, frameworks: map[string]*frameworkEntry{}}
	r.life, r.endLife = context.WithCancel(context.Background())
	r.broker.Store(b)
	if r.jwt, err = b.ProvisioningJWT(true); err != nil {
		return r, fmt.Errorf("region %s: %w", name, err)
	}
	r.jwtFile = filepath.Join(rdir, realnode.JWTFile)
	if err := os.WriteFile(r.jwtFile, []byte(r.jwt), 0o600); err != nil {
		return r, fmt.Errorf("region %s: %w", name, err)
	}
	for n := 1; n <= l.opts.Clients; n++ {
		id := ClientIdentity(name, n)
		cfg, err := b.ClientConfig(id)
		if err != nil {
			return r, fmt.Errorf("region %s: %w", name, err)
		}
		cert, err := l.ca.Issue(id)
		if err != nil {
			return r, fmt.Errorf("region %s: %w", name, err)
		}
		r.clients = append(r.clients, ClientInfo{Identity: id, Certificate: cert.CertFile, Key: cert.KeyFile, Config: cfg})
	}
	return r, nil
}

// Dir is the lab directory.
func (l *Lab) Dir() string { return l.dir }

// ActionsFile is DIR/actions.jsonl.
func (l *Lab) ActionsFile() string { return filepath.Join(l.dir, ActionsFileName) }

// InfoFile is DIR/lab.json.
func (l *Lab) InfoFile() string { return filepath.Join(l.dir, InfoFileName) }

// Recorder is the lab's action recorder, for tests that script actions.
func (l *Lab) Recorder() *recorder.Recorder { return l.rec }

// UpdatesURL is the updates repository to pass to release_update.
func (l *Lab) UpdatesURL() string { return l.repo.URL() }

// UpgradeVersion is the version the updates repository holds.
func (l *Lab) UpgradeVersion() string { return l.opts.UpgradeVersion }

// BaseVersion is what nodes report before an upgrade.
func (l *Lab) BaseVersion() string { return l.opts.BaseVersion }

// Regions are the lab's regions in the order given.
func (l *Lab) Regions() []*Region { return slices.Clone(l.regions) }

// Region is the named region, nil if unknown.
func (l *Lab) Region(name string) *Region {
	for _, r := range l.regions {
		if r.name == name {
			return r
		}
	}
	return nil
}

// Info describes the running lab, as written to lab.json.
func (l *Lab) Info() Info {
	i := Info{Dir: l.dir, Actions: l.ActionsFile(), UpdatesRepository: l.repo.URL(), UpgradeVersion: l.opts.UpgradeVersion, BaseVersion: l.opts.BaseVersion, Regions: map[string]RegionInfo{}}
	for _, r := range l.regions {
		i.Regions[r.name] = r.info()
	}
	return i
}

func (l *Lab) writeInfo() error {
	b, err := json.MarshalIndent(l.Info(), "", "  ")
	if err != nil {
		return fmt.Errorf("encode lab.json: %w", err)
	}
	return atomicfile.Write(l.InfoFile(), b, 0o600)
}

// Stop stops every node (real processes and emulated fleets) before the brokers, then the
// updates repository and the recorder. It is safe to call more than once.
func (l *Lab) Stop() error {
	l.stopOnce.Do(func() {
		var (
			errs []error
			mu   sync.Mutex
			wg   sync.WaitGroup
		)
		for _, r := range l.regions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := r.stopNodes(); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		for _, r := range l.regions {
			r.forgetFrameworks()
			if err := r.broker.Load().Stop(); err != nil {
				errs = append(errs, err)
			}
		}
		if l.repo != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := l.repo.Stop(ctx); err != nil {
				errs = append(errs, err)
			}
			cancel()
		}
		if l.rec != nil {
			if err := l.rec.Close(); err != nil {
				errs = append(errs, err)
			}
		}
		l.lock.release()
		l.stopErr = errors.Join(errs...)
	})
	return l.stopErr
}

// brokerTLS trusts the lab CA; the emulated fleet uses it only to verify the broker.
func (l *Lab) brokerTLS() *tls.Config {
	return &tls.Config{RootCAs: l.ca.Pool(), ServerName: "localhost", MinVersion: tls.VersionTLS12}
}
