// SPDX-License-Identifier: Apache-2.0

package realnode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/choria-io/go-choria/build"
	"github.com/choria-io/go-choria/choria"
	"github.com/choria-io/go-choria/config"
	"github.com/choria-io/go-choria/inter"
	"github.com/choria-io/go-choria/providers/agent/mcorpc/golang/discovery"
	"github.com/choria-io/go-choria/providers/agent/mcorpc/golang/provision"
	"github.com/choria-io/go-choria/providers/agent/mcorpc/golang/rpcutil"
	"github.com/choria-io/go-choria/server"
	"github.com/choria-io/go-choria/server/agents"
	"github.com/seed96588659/muster/sandbox/fleet/recorder"
	"github.com/sirupsen/logrus"
)

// Run is the node process: it starts a real go-choria server from dir/server.conf, in
// provisioning mode while that file says so, and serves until ctx ends. restart and
// release_update re-exec os.Args[0], so the process must be started with an absolute path to
// the node's own binary copy.
func Run(ctx context.Context, dir string) error {
	if err := dieWithParent(); err != nil {
		return err
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("node dir: %w", err)
	}
	spec, err := ReadSpec(dir)
	if err != nil {
		return err
	}
	prev, _ := ReadStatus(dir)
	st := Status{Identity: spec.Identity, PID: os.Getpid(), Started: time.Now().UTC(), Starts: prev.Starts + 1}
	fail := func(err error) error {
		st.Error = err.Error()
		_ = writeStatus(dir, st)
		return err
	}
	st.Version = setBuild(dir, spec)

	rec, err := recorder.Open(spec.ActionsFile, nil)
	if err != nil {
		return fail(err)
	}
	defer rec.Close()

	fw, err := newFramework(ctx, dir, spec)
	if err != nil {
		return fail(err)
	}
	st.Provisioning = fw.ProvisionMode()
	st.Identity = fw.Config.Identity
	if err := writeStatus(dir, st); err != nil {
		return err
	}
	wg, err := serve(ctx, fw, spec, rec, st.Starts)
	if err != nil {
		return fail(err)
	}
	if ctx.Err() != nil {
		return nil
	}
	st.Connected = true
	if err := writeStatus(dir, st); err != nil {
		return err
	}

	<-ctx.Done()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	return nil
}

// setBuild sets go-choria's build variables for this node and returns its version: the binary's
// own when it carries one (an upgraded node), else the spec's. go-choria reads the version and
// the provisioning JWT from its build variables; this process is one node, so setting them
// process-wide is what a real build does.
func setBuild(dir string, spec Spec) string {
	version := spec.Version
	if v, err := BinaryVersion(os.Args[0]); err == nil && v != "" {
		version = v
	}
	build.Version = version
	(&build.Info{}).SetProvisionJWTFile(filepath.Join(dir, JWTFile))
	return version
}

// newFramework loads the node's configuration and builds its go-choria framework, set up for
// provisioning when the configuration says so.
func newFramework(ctx context.Context, dir string, spec Spec) (*choria.Framework, error) {
	cfg, err := config.NewSystemConfig(filepath.Join(dir, ConfigFile), true)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", filepath.Join(dir, ConfigFile), err)
	}
	if cfg.Identity == "" {
		cfg.Identity = spec.Identity
	}
	if cfg.Choria.Provision {
		// a node being provisioned has no certificate yet: file security without verification,
		// as go-choria's own server command sets up a provisioning configuration
		cfg.Choria.SecurityProvider = "file"
		cfg.DisableSecurityProviderVerify = true
	}
	if cfg.LogFile == "" || cfg.LogFile == "stdout" {
		l := logrus.New()
		l.SetOutput(os.Stdout)
		l.SetLevel(logrus.InfoLevel)
		cfg.CustomLogger = l
	}
	fw, err := choria.NewWithConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("node framework: %w", err)
	}
	fw.ConfigureProvisioning(ctx)
	return fw, nil
}

// serve runs the go-choria server with its agents recording what they are asked into rec, each
// action with the process's start count as the node's incarnation (one life per process: restart
// and release_update replace it); the wait group ends with the server.
func serve(ctx context.Context, fw *choria.Framework, spec Spec, rec *recorder.Recorder, incarnation int) (*sync.WaitGroup, error) {
	ident := fw.Config.Identity
	server.RegisterAdditionalAgent(func(ctx context.Context, mgr *agents.Manager, conn inter.AgentConnector, _ *logrus.Entry) error {
		return registerAgents(ctx, mgr, conn, func(a agents.Agent) agents.Agent {
			if a.Name() == "discovery" && !spec.RecordDiscovery {
				return a
			}
			return &recordingAgent{Agent: a, sink: rec, region: spec.Region, node: ident, incarnation: incarnation, now: time.Now}
		})
	})
	srv, err := server.NewInstance(fw)
	if err != nil {
		return nil, fmt.Errorf("new server instance: %w", err)
	}
	wg := &sync.WaitGroup{}
	wg.Add(1)
	if err := srv.Run(ctx, wg); err != nil {
		return nil, fmt.Errorf("run server: %w", err)
	}
	return wg, nil
}

// registerAgents registers discovery, rpcutil and the real provision agent, each through wrap.
func registerAgents(ctx context.Context, mgr *agents.Manager, conn inter.AgentConnector, wrap func(agents.Agent) agents.Agent) error {
	da, err := discovery.New(mgr)
	if err != nil {
		return fmt.Errorf("discovery agent: %w", err)
	}
	ra, err := rpcutil.New(mgr)
	if err != nil {
		return fmt.Errorf("rpcutil agent: %w", err)
	}
	pa, err := provision.New(mgr)
	if err != nil {
		return fmt.Errorf("provision agent: %w", err)
	}
	var errs []error
	for name, a := range map[string]agents.Agent{"discovery": da, "rpcutil": ra, "choria_provision": pa} {
		if err := mgr.RegisterAgent(ctx, name, wrap(a), conn); err != nil {
			errs = append(errs, fmt.Errorf("register %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}
