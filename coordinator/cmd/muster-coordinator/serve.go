// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/config"
	"github.com/seed96588659/muster/coordinator/httpapi"
	"github.com/seed96588659/muster/coordinator/statuspage"
	"github.com/seed96588659/muster/pkg/api"
)

// shutdownGrace bounds how long in-flight requests (long polls included) may finish on stop.
const shutdownGrace = 10 * time.Second

func newServeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a coordinator member (bootstrap a cluster, join one, or restart from the data dir)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.Load(cmd.Flags())
			if err != nil {
				return err
			}
			return serve(cmd.Context(), cfg, cmd.ErrOrStderr())
		},
	}
	config.Flags(cmd.Flags())
	return cmd
}

func newLogger(c config.Log, w io.Writer) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(c.Level)) // config already checked the name
	opts := &slog.HandlerOptions{Level: lvl}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// serve runs one member until ctx ends.
func serve(ctx context.Context, cfg config.Config, stderr io.Writer) error {
	// The core names the member on its own lines (coordinator.New), so it gets the logger
	// without: a second With would print member=c1 twice.
	base := newLogger(cfg.Log, stderr)
	logger := base.With("member", cfg.NodeID)
	logger.Info("starting", "raft", cfg.Raft.Advertise, "api", cfg.HTTP.Advertise, "data_dir", cfg.DataDir,
		"bootstrap", cfg.Bootstrap, "bootstrap_expect", cfg.BootstrapExpect, "join", cfg.Join, "auth", cfg.Auth.String(), "lease_ttl", cfg.Lease.TTL,
		"election_timeout", cfg.Raft.ElectionTimeout)
	for _, w := range cfg.Warnings {
		logger.Warn("configuration: " + w)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	serverTLS, memberHTTP, raftTLS, err := tlsSetup(cfg)
	if err != nil {
		return err
	}
	// The API's port is taken before the member opens its Raft state: a busy port then fails the
	// start before a bootstrap records this member's Raft address in a new data directory.
	ln, err := net.Listen("tcp", cfg.HTTP.Bind)
	if err != nil {
		return fmt.Errorf("listen %s (%s): %w", config.KeyHTTPBind, cfg.HTTP.Bind, err)
	}
	defer ln.Close()
	core, err := openCore(cfg, raftTLS, memberHTTP, base, reg)
	if err != nil {
		return fmt.Errorf("start member %s: %w", cfg.NodeID, err)
	}
	defer func() {
		if err := core.Close(); err != nil {
			logger.Error("stop member", "error", err)
		}
	}()
	mux, err := routes(cfg, core, memberHTTP, logger, reg)
	if err != nil {
		return err
	}
	// Long polls end when the member stops, so shutdown does not wait out their wait; the edge
	// gets 503 and asks another member.
	reqCtx, cancelRequests := context.WithCancel(context.Background())
	defer cancelRequests()
	hs := httpServer(reqCtx, mux, serverTLS, logger)
	served := make(chan error, 1)
	go func() {
		if serverTLS != nil {
			served <- hs.ServeTLS(ln, "", "")
			return
		}
		served <- hs.Serve(ln)
	}()
	logger.Info("api listening", "addr", ln.Addr().String(), "advertise", cfg.HTTP.Advertise, "tls", serverTLS != nil)

	// The member serves its status while it starts: members started with bootstrap_expect count
	// each other through it.
	started := make(chan error, 1)
	go func() { started <- startMember(ctx, core, cfg, memberHTTP, logger) }()

	select {
	case <-ctx.Done():
	case err := <-served:
		return fmt.Errorf("api server: %w", err)
	case err := <-started:
		if err != nil {
			// A start that would mix two clusters stops the member.
			return fmt.Errorf("start: %w", err)
		}
		select {
		case <-ctx.Done():
		case err := <-served:
			return fmt.Errorf("api server: %w", err)
		}
	}
	logger.Info("stopping")
	cancelRequests()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		logger.Warn("api shutdown", "error", err)
	}
	return nil
}

// routes is everything a member serves: the API, the status page, metrics and health.
func routes(cfg config.Config, core *coordinator.Service, memberHTTP *http.Client, logger *slog.Logger, reg *prometheus.Registry) (*http.ServeMux, error) {
	apiSrv, err := httpapi.New(core, httpapi.Config{
		Edges:             edgeCredentials(cfg.Auth.Edges),
		EdgeTokens:        cfg.Auth.EdgeTokens,
		AdminTokens:       nonEmpty(cfg.Auth.AdminToken),
		Admins:            adminCredentials(cfg.Auth.Admins),
		ClientCerts:       cfg.Auth.ClientCerts,
		Readers:           cfg.Auth.Readers, // the status page opens with a client certificate
		Insecure:          cfg.Auth.Insecure,
		MaxBodyBytes:      cfg.HTTP.MaxBodyBytes,
		Redirect:          cfg.HTTP.Redirect,
		Profiling:         cfg.HTTP.Profiling,
		MaxEventReaders:   cfg.HTTP.MaxEventReaders,
		EventWriteTimeout: cfg.HTTP.EventWriteTimeout,
		ForwardClient:     memberHTTP,
		Self:              cfg.HTTP.Advertise,
		MemberName:        cfg.TLS.MemberName,
		Errors:            coordinator.HTTPErrors(),
		Logger:            logger,
		// The member label, as every muster_coordinator_* metric carries (coordinator/metrics).
		Registry: prometheus.WrapRegistererWith(prometheus.Labels{"member": cfg.NodeID}, reg),
	})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/", apiSrv)
	mux.Handle(statuspage.Path, statuspage.Handler())
	// A person who types a member's address gets its status page.
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, statuspage.Path, http.StatusFound)
	})
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if err := core.Ready(); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ready\n")
	})
	return mux, nil
}

// httpServer is the member's HTTP server with its limits; requests run under reqCtx.
func httpServer(reqCtx context.Context, mux http.Handler, serverTLS *tls.Config, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           mux,
		BaseContext:       func(net.Listener) context.Context { return reqCtx },
		TLSConfig:         serverTLS,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      apiMaxWait + 30*time.Second, // an acquire may long-poll up to its wait
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// apiMaxWait is the longest long poll a request may ask for.
const apiMaxWait = api.MaxWait

// joiner is the part of a member joinCluster drives (coordinator.Service).
type joiner interface {
	IsMember() (bool, error)
	JoinRequest() (api.JoinRequest, error)
	Joined(api.JoinRequest, api.JoinResponse) (bool, error)
}

// joinCluster asks the members in cfg.Join to take this member in until it needs nothing more:
// a member its own Raft configuration holds (a restart keeps its join setting) does not ask at
// all, so a join target that is down costs it nothing; a member without Raft state asks until the
// leader has promoted it from non-voter to voter. It returns an error only when the leader's
// cluster is not the one this member's data directory belongs to, or for a bad join setting.
func joinCluster(ctx context.Context, core joiner, cfg config.Config, hc *http.Client, logger *slog.Logger) error {
	c, err := api.NewClient(cfg.Join, api.WithToken(cfg.Auth.AdminToken), api.WithHTTPClient(hc))
	if err != nil {
		return err
	}
	const first, most = 250 * time.Millisecond, 5 * time.Second
	delay := first
	var learnerSince uint64
	for attempt := 0; ; attempt++ {
		member, err := core.IsMember()
		if err == nil && member {
			if attempt == 0 {
				logger.Info("a member of the cluster already (its own Raft configuration holds it); not joining", "join", cfg.Join)
			}
			return nil
		}
		req, err := core.JoinRequest()
		var resp api.JoinResponse
		if err == nil {
			jctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			resp, err = c.Join(jctx, req)
			cancel()
		}
		if err == nil {
			done, jerr := core.Joined(req, resp)
			switch {
			case jerr != nil:
				return jerr
			case done:
				logger.Info("joined the cluster", "via", c.Leader(), "cluster_id", resp.ClusterID, "voter", resp.Voter)
				return nil
			case resp.ConfigIndex > learnerSince:
				learnerSince = resp.ConfigIndex
				logger.Info("taken in as a non-voter; it gets its vote once it has caught up", "via", c.Leader(), "config_index", resp.ConfigIndex)
			}
			// A learner catching up asks again soon.
			delay = first
		} else {
			if api.IsCode(err, api.CodeOtherCluster) {
				return err
			}
			logger.Warn("join failed; retrying", "error", err, "in", delay)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
		if err != nil {
			delay = min(2*delay, most)
		}
	}
}

// tlsSetup returns the API server's TLS config (nil without a certificate), the HTTP client this
// member uses towards other members (forwarding, joining) presenting its own certificate, and the
// Raft transport's mutual TLS config when raft.tls is set.
func tlsSetup(cfg config.Config) (server *tls.Config, members *http.Client, raft *tls.Config, err error) {
	if !cfg.TLS.Enabled() {
		return nil, &http.Client{}, nil, nil
	}
	kp, pool, err := tlsFiles{
		ca: cfg.TLS.CA, cert: cfg.TLS.Cert, key: cfg.TLS.Key,
		caName: config.KeyTLSCA, certName: config.KeyTLSCert + "/" + config.KeyTLSKey, name: config.KeyTLSCert + " and " + config.KeyTLSKey,
	}.load()
	if err != nil {
		return nil, nil, nil, err
	}
	server = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{*kp}}
	if pool != nil {
		server.ClientCAs = pool
		// Verified when presented; a bearer token still opens the API without one.
		server.ClientAuth = tls.VerifyClientCertIfGiven
	}
	if cfg.Raft.TLS {
		// Members authenticate each other both ways: only holders of a certificate from tls.ca
		// that carries the member name may join the replication stream (config refuses
		// raft.tls without tls.ca); a member whose own certificate lacks it would be refused by
		// every other member, so it says so at start.
		if err := carriesName(kp, cfg.TLS.MemberName); err != nil {
			return nil, nil, nil, err
		}
		raft = &tls.Config{
			MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{*kp},
			RootCAs: pool, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert,
		}
	}
	return server, tlsHTTPClient(kp, pool), raft, nil
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// edgeCredentials maps auth.edges to the HTTP layer's bindings.
func edgeCredentials(edges []config.Edge) []httpapi.EdgeCredential {
	out := make([]httpapi.EdgeCredential, len(edges))
	for i, e := range edges {
		out[i] = httpapi.EdgeCredential{Token: e.Token, Edge: e.Name, Regions: e.Regions}
	}
	return out
}

func adminCredentials(admins []config.Admin) []httpapi.AdminCredential {
	out := make([]httpapi.AdminCredential, len(admins))
	for i, a := range admins {
		out[i] = httpapi.AdminCredential{Name: a.Name, Role: a.Role, Token: a.Token}
	}
	return out
}

// carriesName checks that the leaf of kp carries DNS name name, as every member's must.
func carriesName(kp *tls.Certificate, name string) error {
	leaf := kp.Leaf
	if leaf == nil {
		var err error
		if leaf, err = x509.ParseCertificate(kp.Certificate[0]); err != nil {
			return fmt.Errorf("%s: %w", config.KeyTLSCert, err)
		}
	}
	if !slices.Contains(leaf.DNSNames, name) {
		return fmt.Errorf("%s: the certificate (DNS names %v) does not carry %s=%s as a DNS name: members refuse each other's Raft connections without it; reissue it with that subject alternative name", config.KeyTLSCert, leaf.DNSNames, config.KeyTLSMemberName, name)
	}
	return nil
}
