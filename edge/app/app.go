// SPDX-License-Identifier: Apache-2.0

// Package app assembles a muster-edge from its configuration: the Choria framework and broker
// connections, the helper, the credential checks, the host flow, discovery, the lease source
// (local when standalone, the coordinators in cluster mode), the edge and its monitor endpoints. cmd/muster-edge and the end-to-end tests
// both build the edge here, so what the tests run is what ships.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/choria-io/go-choria/backoff"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/callhistory"
	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/edge/discovery"
	"github.com/seed96588659/muster/edge/helper"
	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/edge/journal"
	"github.com/seed96588659/muster/edge/keys"
	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/edge/monitor"
	"github.com/seed96588659/muster/edge/upgrade"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/metrics"
	"github.com/seed96588659/muster/pkg/rpc"
)

// Version is reported in the edge's startup event.
const Version = "0.1.0"

// Options are what the configuration does not say.
type Options struct {
	// Logger receives the edge's logs; nil discards them.
	Logger *slog.Logger
	// ChoriaLog receives go-choria's own warnings; nil discards them.
	ChoriaLog io.Writer
	// OnResult sees every final host result (progress displays, tests).
	OnResult func(hostflow.Result)
	// Tune, when set, may adjust the edge's options before it is built (tests shorten waits).
	Tune func(*edge.Options)
	// RPCTimeout, when set, replaces the reply windows go-choria derives from the DDLs (tests
	// with nodes that never answer shorten it); RetryPolicy replaces backoff.Default.
	RPCTimeout  time.Duration
	RetryPolicy backoff.Policy
	// CoordinatorHTTP, when set, is the HTTP client towards the coordinators (tests put a proxy
	// in between); the configuration's TLS settings are then not used.
	CoordinatorHTTP *http.Client
	// ElectionBackoff, when set, spaces the campaigns of leader_election instead of
	// choria-provisioner's backoff.TwentySec (tests shorten it).
	ElectionBackoff backoff.Policy
}

// App is one running edge.
type App struct {
	Edge    *edge.Edge
	Metrics *metrics.Registry
	// Source is the standalone lease source, nil in cluster mode.
	Source *lease.Local
	// Coordinator is the cluster-mode lease source, nil standalone.
	Coordinator *lease.Coordinator
	Config      *config.Config

	log     *slog.Logger
	conn    *rpc.Conn
	finder  *discovery.Discoverer
	runner  helper.Runner
	monitor *http.Server
	addr    net.Addr
	journal *journal.Journal
	calls   *callhistory.Writer
}

// Build wires everything cfg asks for and connects to the broker; Run starts provisioning. Its
// errors are *StartError, each with what the operator can do about it.
func Build(ctx context.Context, cfg *config.Config, o Options) (*App, error) {
	if err := cfg.Validate(); err != nil {
		return nil, withRemedy(err, remedySettings)
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &App{Config: cfg, Metrics: metrics.New(), log: log}
	if err := a.build(ctx, o); err != nil {
		// Close releases what the failed build opened and skips the rest
		a.Close()
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, withRemedy(err, remedySettings)
	}
	return a, nil
}

// build opens and wires the edge's parts in a, local state first, so a start that cannot work
// fails before it waits for the network.
func (a *App) build(ctx context.Context, o Options) error {
	cfg, log := a.Config, a.log
	fw, err := framework(cfg, o.ChoriaLog)
	if err != nil {
		return err
	}
	name := cfg.EdgeName
	if name == "" {
		name = fw.CallerID()
	}

	var replay []journal.Intent
	if !cfg.Standalone() {
		// Named for the edge, so edges of one host (a lab's region) may share a state_dir.
		path := filepath.Join(cfg.StateDir, journalName(name))
		if a.journal, replay, err = journal.Open(path, log); err != nil {
			return journalError(cfg, name, path, err)
		}
	}

	signing := signingMode(cfg.RequestSigning)
	dial, cancel := context.WithTimeout(ctx, cfg.BrokerConnectTimeout)
	a.conn, err = rpc.Dial(dial, fw, rpc.ConnOptions{Signing: signing, Timeout: o.RPCTimeout})
	cancel()
	if err != nil {
		return brokerError(ctx, cfg, fw, err)
	}
	// The broker answered a moment ago; this connection's context must outlive the start.
	do := discovery.DefaultOptions()
	do.MaxNodes = cfg.DiscoveryMaxNodes
	a.finder, err = discovery.New(ctx, fw, do)
	if err != nil {
		return brokerError(ctx, cfg, fw, err)
	}
	a.runner, err = newRunner(cfg, a.Metrics, log)
	if err != nil {
		return fmt.Errorf("helper: %w", err)
	}
	wrapper, err := rpc.NewWrapper(rpc.WrapperOptions{Site: cfg.Site, Metrics: a.Metrics, Logger: log, Policy: o.RetryPolicy})
	if err != nil {
		return err
	}
	deps := hostflow.Deps{Helper: a.runner, Metrics: a.Metrics, Logger: log, Wrapper: wrapper, Transport: a.conn, Token: cfg.Token,
		Presence: a.present}
	if err := credentials(cfg, &deps, log); err != nil {
		return withRemedy(err, remedyFile)
	}
	flow, err := hostflow.New(hostflow.Settings{
		Site:            cfg.Site,
		Features:        hostflow.Features{JWT: cfg.Features.JWT, ED25519: cfg.Features.ED25519, PKI: cfg.Features.PKI},
		Interval:        cfg.Interval,
		Upgrade:         upgrade.Settings{Enabled: cfg.Features.Upgrades, Repository: cfg.UpgradesRepository, Optional: cfg.UpgradesOptional},
		RestartSplay:    1,
		Signing:         hostflow.NewSigningPolicy(signing),
		DuplicateWindow: cfg.DuplicateWindow,
	}, deps)
	if err != nil {
		return err
	}

	mode, err := a.mode(cfg, name, o)
	if err != nil {
		return err
	}
	campaign, err := a.campaign(cfg, name, o)
	if err != nil {
		return err
	}

	eo := edge.DefaultOptions()
	eo.Site, eo.Region, eo.Name = cfg.Site, cfg.Region, name
	eo.Workers, eo.BatchSize, eo.Interval = cfg.Workers, cfg.BatchSize, cfg.Interval
	eo.LifecycleComponent, eo.LeaseMargin = cfg.LifecycleComponent, cfg.LeaseMargin
	eo.Flow, eo.Mode, eo.Finder = flow, mode, a.finder
	eo.Metrics, eo.Logger, eo.OnResult, eo.Replay = a.Metrics, log, o.OnResult, replay
	eo.NewPerSweep = cfg.NewNodesPerSweep
	if cfg.NewNodeCheckTimeout > 0 {
		eo.Check = a.answers
	}
	eo.NewRate, eo.NewBurst = float64(cfg.NewNodesRate), cfg.NewNodesBurst
	if a.journal != nil {
		// Never a nil *journal.Journal in the interface: standalone has no journal at all.
		eo.Journal = a.journal
	}
	if campaign != nil {
		eo.Leadership = campaign
	}
	if o.Tune != nil {
		o.Tune(&eo)
	}
	a.Edge, err = edge.New(eo)
	if err != nil {
		return err
	}
	if err := a.finder.Announce(fw.Config.Identity, Version); err != nil {
		log.Warn("could not publish the edge's startup event", "error", err)
	}
	if cfg.MonitorPort > 0 {
		if err := a.serveMonitor(cfg); err != nil {
			return withRemedy(err, "choose a free monitor_port (or another monitor_bind), or stop what listens there")
		}
	}
	return nil
}

// mode is standalone over the local source, or cluster mode over the coordinators' under this
// edge's credential (bound there to name and the region).
func (a *App) mode(cfg *config.Config, name string, o Options) (edge.Mode, error) {
	// The same gauges in both modes: the local queue's counts standalone, the region's ledger
	// counts from the coordinators' answers in cluster mode.
	waiting := a.Metrics.WorkQueueEntries.WithLabelValues(cfg.Site)
	unprovisioned := a.Metrics.WaitingNodes.WithLabelValues(cfg.Site)
	changed := func(c lease.Counts) {
		waiting.Set(float64(c.Waiting))
		unprovisioned.Set(float64(c.Waiting + c.Leased))
	}
	if cfg.Standalone() {
		a.Source = lease.NewLocal(lease.LocalOptions{Edge: name, Region: cfg.Region, Changed: changed})
		return edge.Standalone(a.Source), nil
	}
	hc := o.CoordinatorHTTP
	if hc == nil {
		var err error
		if hc, err = coordinatorHTTP(cfg); err != nil {
			return edge.Mode{}, withRemedy(err, remedyFile)
		}
	}
	// Eight rounds over the members, pausing 0.25, 0.5, 1 and then 2 s between rounds, outlast an
	// election (about a second) within one call, so a failover is no error of the edge's; the
	// client's default (three rounds, under 2 s) gave up during one.
	opts := []api.Option{api.WithHTTPClient(hc), api.WithAttempts(8*len(cfg.Coordinators) + 2)}
	if cfg.CoordinatorToken != "" {
		opts = append(opts, api.WithToken(cfg.CoordinatorToken))
	}
	if cfg.CallHistory != "" {
		var err error
		if a.calls, err = callhistory.Open(cfg.CallHistory, name, a.log); err != nil {
			return edge.Mode{}, withRemedy(fmt.Errorf("call_history: %w", err), remedyFile)
		}
		opts = append(opts, api.WithCallObserver(a.calls.Observe))
		a.log.Info("recording the calls to the coordinators", "file", cfg.CallHistory)
	}
	client, err := api.NewClient(cfg.Coordinators, opts...)
	if err != nil {
		return edge.Mode{}, fmt.Errorf("coordinators: %w", err)
	}
	co := lease.DefaultCoordinatorOptions()
	co.Client, co.Edge, co.Region, co.Logger, co.Changed = client, name, cfg.Region, a.log, changed
	co.CredentialRemedy = credentialRemedy(cfg, name)
	a.Coordinator, err = lease.NewCoordinator(co)
	if err != nil {
		return edge.Mode{}, err
	}
	for _, c := range lease.CredentialMetrics(a.Coordinator, cfg.Site) {
		if err := a.Metrics.Registerer().Register(c); err != nil {
			return edge.Mode{}, fmt.Errorf("register edge metric: %w", err)
		}
	}
	a.log.Info("cluster mode", "edge", name, "region", cfg.Region, "coordinators", cfg.Coordinators)
	return edge.Cluster(a.Coordinator), nil
}

// journalName is the journal's file name for edge name: path separators and other characters
// a file name should not hold become '_'.
func journalName(name string) string {
	return "journal-" + strings.Map(func(r rune) rune {
		if r == '-' || r == '.' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, name)
}

// present says whether identity answers a targeted discovery in provisioning mode.
func (a *App) present(ctx context.Context, identity string) (bool, error) {
	ids, err := a.finder.Sweep(ctx, identity)
	return len(ids) > 0, err
}

// answers is the check a node new to this edge gets before it is registered: one rpcutil#ping
// to its identity, no retry, new_node_check_timeout to answer. It changes nothing on the node
// and takes no provisioning lock, so it needs no lease.
func (a *App) answers(ctx context.Context, identity string) (bool, error) {
	replies, err := a.conn.Request(ctx, rpc.Request{
		Agent: "rpcutil", Action: "ping", Identity: identity, Data: []byte("{}"), Timeout: a.Config.NewNodeCheckTimeout,
	})
	if err != nil {
		return false, fmt.Errorf("check %s: %w", identity, err)
	}
	for _, r := range replies {
		if r.Sender == identity && r.OK() {
			return true, nil
		}
	}
	return false, nil
}

// MonitorAddr is where the monitor endpoints listen, nil without monitor_port.
func (a *App) MonitorAddr() net.Addr { return a.addr }

func (a *App) serveMonitor(cfg *config.Config) error {
	addr := net.JoinHostPort(cfg.MonitorBind, fmt.Sprint(cfg.MonitorPort))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("monitor_port: listen on %s: %w", addr, err)
	}
	a.addr = l.Addr()
	var checks []monitor.Check
	if a.Coordinator != nil {
		checks = append(checks, a.Coordinator.CredentialReady)
	}
	a.monitor, l, err = monitor.Server(l, monitor.Handler(a.Edge, a.Metrics.Handler(), cfg.PauseToken, checks...), monitor.DefaultLimits())
	if err != nil {
		l.Close()
		return fmt.Errorf("monitor_port: %w", err)
	}
	go func() {
		if err := a.monitor.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("monitor server stopped", "error", err)
		}
	}()
	return nil
}

// Run provisions until ctx ends.
func (a *App) Run(ctx context.Context) error { return a.Edge.Run(ctx) }

// Close releases everything Build opened; call it after Run returned.
func (a *App) Close() {
	if a.monitor != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = a.monitor.Shutdown(ctx)
		cancel()
	}
	if a.runner != nil {
		_ = a.runner.Close()
	}
	if a.finder != nil {
		a.finder.Close()
	}
	if a.conn != nil {
		_ = a.conn.Close()
	}
	if a.journal != nil {
		_ = a.journal.Close()
	}
	if a.calls != nil {
		_ = a.calls.Close()
	}
}

func newRunner(cfg *config.Config, reg *metrics.Registry, log *slog.Logger) (helper.Runner, error) {
	ho := helper.Options{Command: cfg.Helper, Timeout: cfg.HelperTimeout, Site: cfg.Site, Metrics: reg, Logger: log,
		Secrets: helperSecrets(cfg), Environment: cfg.HelperEnvironment}
	var r helper.Runner
	var err error
	if cfg.HelperPersistent {
		r, err = helper.NewPersistent(ho)
	} else {
		r, err = helper.NewExec(ho)
	}
	if err != nil {
		return nil, err
	}
	return helper.Limit(r, cfg.HelperRate), nil
}

// helperSecrets are the values the helper's diagnostics are redacted by: the secret keys and the
// server JWT signing seed as the file holds it now (a seed rotated later is still caught by the
// helper's patterns for key-like runs).
func helperSecrets(cfg *config.Config) []string {
	out := cfg.Secrets()
	if cfg.JWTSigningKey != "" {
		// unreadable: credentials reports it when the signer loads it
		if b, err := os.ReadFile(cfg.JWTSigningKey); err == nil {
			if seed := strings.TrimSpace(string(b)); seed != "" {
				out = append(out, seed)
			}
		}
	}
	return out
}

// credentials builds the checks and signers the enabled features need.
func credentials(cfg *config.Config, d *hostflow.Deps, log *slog.Logger) error {
	if cfg.Features.JWT || cfg.Features.ED25519 {
		v, err := keys.NewJWTVerifier(cfg.JWTVerifyCert, keys.Reload{Interval: keys.DefaultReloadInterval})
		if err != nil {
			return fmt.Errorf("jwt_verify_cert: %w", err)
		}
		d.Verifier = v
	}
	if cfg.Features.ED25519 {
		s, err := keys.NewSigner(keys.SignerConfig{SigningKey: cfg.JWTSigningKey, SigningToken: cfg.JWTSigningToken, Validity: cfg.ServerJWTValidity, Reload: keys.Reload{Interval: keys.DefaultReloadInterval}, Logger: log})
		if err != nil {
			return fmt.Errorf("jwt_signing_key: %w", err)
		}
		d.Signer = s
	}
	if cfg.Features.PKI {
		dl, err := keys.NewDenyList(cfg.CertDenyList)
		if err != nil {
			return fmt.Errorf("cert_deny_list: %w", err)
		}
		d.CSR = dl
	}
	return nil
}
