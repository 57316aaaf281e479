// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/choria-io/go-choria/choria"
	"github.com/seed96588659/muster/sandbox/fleet/broker"
	"github.com/seed96588659/muster/sandbox/fleet/emulated"
	"github.com/seed96588659/muster/sandbox/fleet/realnode"
)

// Region is one region of a running lab: its broker, real nodes and emulated fleet.
type Region struct {
	name    string
	dir     string
	lab     *Lab
	broker  atomic.Pointer[broker.Broker] // replaced by RestartBroker
	jwt     string
	jwtFile string
	clients []ClientInfo

	restartMu  sync.Mutex // one RestartBroker at a time
	mu         sync.Mutex
	real       []*realNode
	failed     map[string]string
	fleet      *emulated.Fleet
	frameworks map[string]*frameworkEntry

	// life ends when the region's nodes stop; the re-entry supervisors of its real nodes
	// (reentry.go) run until then, and stopNodes waits for them before it stops the nodes.
	life        context.Context
	endLife     context.CancelFunc
	supervisors sync.WaitGroup
}

type frameworkEntry struct {
	once sync.Once
	fw   *choria.Framework
	err  error
}

// Name is the region's name.
func (r *Region) Name() string { return r.name }

// Broker is the region's provisioning broker.
func (r *Region) Broker() *broker.Broker { return r.broker.Load() }

// Fleet is the region's emulated fleet, nil when it has none.
func (r *Region) Fleet() *emulated.Fleet { return r.fleet }

// Clients are the region's client identities (one per edge).
func (r *Region) Clients() []ClientInfo { return slices.Clone(r.clients) }

// ProvisioningJWT is the signed provisioning.jwt of the region's nodes.
func (r *Region) ProvisioningJWT() string { return r.jwt }

// Framework is a go-choria client framework for identity (any name ending in .mcollective),
// connected through the provisioner user to this region's broker, for the generated clients
// (rpcutilclient.New(fw), choria_provisionclient.New(fw)) and broadcast discovery. One
// framework per identity is cached; its caller id is "choria=<identity>".
func (r *Region) Framework(identity string) (*choria.Framework, error) {
	r.mu.Lock()
	e, ok := r.frameworks[identity]
	if !ok {
		e = &frameworkEntry{}
		r.frameworks[identity] = e
	}
	r.mu.Unlock()
	e.once.Do(func() { e.fw, e.err = r.broker.Load().ClientFramework(identity) })
	return e.fw, e.err
}

// forgetFrameworks drops the cached client frameworks: a go-choria framework has no Close,
// and its connections belong to the clients built on it, so dropping it is all Stop can do.
func (r *Region) forgetFrameworks() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.frameworks = map[string]*frameworkEntry{}
}

// RealNodes are the identities of real nodes that started, sorted.
func (r *Region) RealNodes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, n := range r.real {
		if _, bad := r.failed[n.identity]; !bad {
			out = append(out, n.identity)
		}
	}
	sort.Strings(out)
	return out
}

// EmulatedNodes are the identities of the emulated fleet.
func (r *Region) EmulatedNodes() []string {
	if r.fleet == nil {
		return nil
	}
	return r.fleet.Identities()
}

// Nodes are every node that started, real and emulated, sorted.
func (r *Region) Nodes() []string {
	out := append(r.RealNodes(), r.EmulatedNodes()...)
	sort.Strings(out)
	return out
}

// Failed maps each node that could not start to the reason.
func (r *Region) Failed() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.failed)
}

// NodeDir is a real node's directory.
func (r *Region) NodeDir(identity string) string { return filepath.Join(r.dir, "nodes", identity) }

// NodeStatus is what a real node process last wrote about itself.
func (r *Region) NodeStatus(identity string) (realnode.Status, error) {
	return realnode.ReadStatus(r.NodeDir(identity))
}

// WaitNodeStatus polls a real node's status until cond holds or ctx ends, returning the last
// status read; e.g. wait for Starts >= 2 && !Provisioning && Connected after a restart.
func (r *Region) WaitNodeStatus(ctx context.Context, identity string, cond func(realnode.Status) bool) (realnode.Status, error) {
	for {
		st, err := r.NodeStatus(identity)
		if err == nil && cond(st) {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return st, fmt.Errorf("wait for status of %s (last %+v, read error %v): %w", identity, st, err, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// NodeExited reports whether a real node's process has ended (shutdown, crash) and how.
func (r *Region) NodeExited(identity string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.real {
		if n.identity == identity {
			return n.exited()
		}
	}
	return false, fmt.Errorf("no real node %s in region %s", identity, r.name)
}

// ProvisionedConfig is a configuration for choria_provision#configure that makes identity come
// back after its restart as an ordinary (not provisioning) server connected to this broker with
// a CA-issued certificate, in collective mcollective. Values are strings, as configure wants.
func (r *Region) ProvisionedConfig(identity string) (map[string]string, error) {
	cert, err := r.lab.ca.Issue(identity)
	if err != nil {
		return nil, err
	}
	return map[string]string{
		"identity":                         identity,
		"plugin.choria.server.provision":   "false",
		"plugin.choria.use_srv":            "false",
		"plugin.choria.middleware_hosts":   fmt.Sprintf("127.0.0.1:%d", r.broker.Load().Port()),
		"plugin.security.provider":         "file",
		"plugin.security.file.certificate": cert.CertFile,
		"plugin.security.file.key":         cert.KeyFile,
		"plugin.security.file.ca":          r.lab.ca.CAFile(),
		"loglevel":                         "info",
		"logfile":                          filepath.Join(r.NodeDir(identity), realnode.LogFile),
	}, nil
}

// launchReal prepares and starts the region's real node processes without waiting.
func (r *Region) launchReal(binaries map[string]string) {
	for i := 1; i <= r.lab.opts.Real; i++ {
		id := RealIdentity(r.name, i)
		version := r.lab.opts.versionFor(i - 1)
		n := &realNode{identity: id, region: r.name, dir: r.NodeDir(id), version: version, logger: r.lab.opts.Logger}
		r.mu.Lock()
		r.real = append(r.real, n)
		r.mu.Unlock()
		if err := r.launchOne(n, binaries[version]); err != nil {
			r.fail(id, err)
		}
	}
}

func (r *Region) launchOne(n *realNode, binary string) error {
	bin, err := realnode.Prepare(realnode.Layout{
		Dir:    n.dir,
		Spec:   realnode.Spec{Identity: n.identity, Region: r.name, ActionsFile: r.lab.ActionsFile(), Version: n.version, RecordDiscovery: r.lab.opts.RecordDiscovery},
		JWT:    r.jwt,
		Binary: binary,
	})
	if err != nil {
		return err
	}
	if slices.Contains(r.lab.opts.Broken, n.identity) {
		// an unknown security provider makes go-choria refuse to start the node
		if err := os.WriteFile(filepath.Join(n.dir, realnode.ConfigFile), []byte("identity = "+n.identity+"\nplugin.choria.server.provision = false\nplugin.security.provider = broken\n"), 0o600); err != nil {
			return err
		}
	}
	n.bin, n.source = bin, binary
	return n.start()
}

func (r *Region) fail(id string, err error) {
	r.mu.Lock()
	r.failed[id] = err.Error()
	r.mu.Unlock()
	r.lab.opts.Logger.Error("node could not start", "region", r.name, "node", id, "error", err)
}

// awaitReal waits for every launched real node; those that do not connect are marked failed
// and stopped.
func (r *Region) awaitReal(ctx context.Context, limit time.Duration) {
	r.mu.Lock()
	nodes := slices.Clone(r.real)
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, n := range nodes {
		if n.cmd == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := n.waitConnected(ctx, limit); err != nil {
				r.fail(n.identity, err)
				_ = n.stop(5 * time.Second)
			}
		}()
	}
	wg.Wait()
}

func (r *Region) startEmulated(ctx context.Context) error {
	if r.lab.opts.Emulated == 0 {
		return nil
	}
	f, err := emulated.Start(ctx, emulated.Config{
		BrokerURL:       r.broker.Load().URL(),
		TLS:             r.lab.brokerTLS(),
		Region:          r.name,
		Prefix:          EmulatedPrefix(r.name),
		Count:           r.lab.opts.Emulated,
		Token:           r.broker.Load().Token(),
		JWT:             r.jwt,
		Version:         r.lab.opts.BaseVersion,
		Faults:          r.lab.opts.Faults,
		Recorder:        r.lab.rec,
		Logger:          r.lab.opts.Logger.With("region", r.name),
		TimeScale:       r.lab.opts.EmulatedTimeScale,
		LockWindow:      r.lab.opts.EmulatedLockWindow,
		RecordDiscovery: r.lab.opts.RecordDiscovery,
		CheckReleases:   true,
	})
	if err != nil {
		return fmt.Errorf("region %s: emulated fleet: %w", r.name, err)
	}
	r.fleet = f
	return nil
}

// stopNodes stops real node processes and the emulated fleet.
func (r *Region) stopNodes() error {
	r.endLife()
	r.supervisors.Wait()
	r.mu.Lock()
	nodes := slices.Clone(r.real)
	fleet := r.fleet
	r.mu.Unlock()
	var (
		errs []error
		mu   sync.Mutex
		wg   sync.WaitGroup
	)
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := n.stop(10 * time.Second); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	if fleet != nil {
		if err := fleet.Stop(); err != nil {
			mu.Lock()
			errs = append(errs, fmt.Errorf("region %s: stop emulated fleet: %w", r.name, err))
			mu.Unlock()
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (r *Region) info() RegionInfo {
	i := RegionInfo{
		BrokerURL:              r.broker.Load().URL(),
		CA:                     r.lab.ca.CAFile(),
		CAKey:                  r.lab.ca.KeyFile(),
		Clients:                r.Clients(),
		ProvisioningToken:      r.broker.Load().Token(),
		ProvisioningUser:       broker.ProvisioningUser,
		ProvisioningPassword:   r.broker.Load().ProvisioningPassword(),
		JWTSignerPublicKey:     r.lab.signer.PublicKeyHex(),
		JWTSignerPublicKeyFile: r.lab.signer.PublicKeyFile(),
		ProvisioningJWT:        r.jwtFile,
		EmulatedPrefix:         EmulatedPrefix(r.name),
		RealNodes:              []NodeInfo{},
		FailedNodes:            []FailedNode{},
	}
	if len(r.clients) > 0 {
		i.ClientConfig = r.clients[0].Config
	}
	if b := r.broker.Load(); b.Streams() {
		i.Streams, i.ElectionBucket, i.ElectionTTL = true, broker.ElectionBucket, b.ElectionTTL().String()
	}
	if r.fleet != nil {
		i.EmulatedCount = len(r.fleet.Identities())
	}
	failed := r.Failed()
	r.mu.Lock()
	for _, n := range r.real {
		if _, bad := failed[n.identity]; bad || n.cmd == nil {
			continue
		}
		i.RealNodes = append(i.RealNodes, NodeInfo{Identity: n.identity, Dir: n.dir, PID: n.cmd.Process.Pid, Version: n.version})
	}
	r.mu.Unlock()
	for id, e := range failed {
		i.FailedNodes = append(i.FailedNodes, FailedNode{Identity: id, Error: e})
	}
	sort.Slice(i.FailedNodes, func(a, b int) bool { return i.FailedNodes[a].Identity < i.FailedNodes[b].Identity })
	return i
}
