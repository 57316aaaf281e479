// SPDX-License-Identifier: Apache-2.0

package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/choria-io/go-choria/backoff"

	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/edge/discovery"
	"github.com/seed96588659/muster/edge/plan"
	"github.com/seed96588659/muster/edge/upgrade"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/metrics"
	"github.com/seed96588659/muster/pkg/rpc"
)

// PlanOptions are what a plan reads besides the configuration.
type PlanOptions struct {
	// AskHelper runs the configuration's helper for every node that answered.
	AskHelper bool
	// ReaderToken opens the coordinators' admin reads in cluster mode (the admin token);
	// ReaderCert and ReaderKey are a reader certificate instead (named in the coordinators'
	// auth.readers), trusted through coordinator_tls_ca.
	ReaderToken string
	ReaderCert  string
	ReaderKey   string
	// Logger receives warnings; nil discards them. ChoriaLog receives go-choria's.
	Logger    *slog.Logger
	ChoriaLog io.Writer
	// RPCTimeout and RetryPolicy are as in Options (tests shorten them).
	RPCTimeout  time.Duration
	RetryPolicy backoff.Policy
	// CoordinatorHTTP, when set, replaces the client built from the reader certificate.
	CoordinatorHTTP *http.Client
}

// noReaderCredential is why a plan without a reader credential does not read the ledger.
const noReaderCredential = "the edge's own credential opens only the edge API, whose every call writes (register, acquire, report, heartbeat); " +
	"give plan the admin token in MUSTER_AUTH_ADMIN_TOKEN, or a reader certificate (--reader-cert, --reader-key)"

// Plan builds what `muster-edge plan` reads through (the broker connection, discovery, the
// inventory reader, the helper when asked, the ledger reader in cluster mode), makes one plan
// and releases them. It builds no lease source, journal, host flow or monitor, and does not
// announce the edge.
func Plan(ctx context.Context, cfg *config.Config, o PlanOptions) (*plan.Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, withRemedy(err, remedySettings)
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	fw, err := framework(cfg, o.ChoriaLog)
	if err != nil {
		return nil, err
	}
	name := cfg.EdgeName
	if name == "" {
		name = fw.CallerID()
	}
	dial, cancel := context.WithTimeout(ctx, cfg.BrokerConnectTimeout)
	conn, err := rpc.Dial(dial, fw, rpc.ConnOptions{Signing: signingMode(cfg.RequestSigning), Timeout: o.RPCTimeout})
	cancel()
	if err != nil {
		return nil, brokerError(ctx, cfg, fw, err)
	}
	defer conn.Close()
	do := discovery.DefaultOptions()
	do.MaxNodes = cfg.DiscoveryMaxNodes
	finder, err := discovery.New(ctx, fw, do)
	if err != nil {
		return nil, brokerError(ctx, cfg, fw, err)
	}
	defer finder.Close()
	reg := metrics.New()
	wrapper, err := rpc.NewWrapper(rpc.WrapperOptions{Site: cfg.Site, Metrics: reg, Logger: log, Policy: o.RetryPolicy})
	if err != nil {
		return nil, err
	}
	reader, err := plan.NewReader(wrapper, conn)
	if err != nil {
		return nil, err
	}
	deps := plan.Deps{Reader: reader, Sweep: func(ctx context.Context) ([]string, error) { return finder.Sweep(ctx) }}
	if o.AskHelper {
		runner, err := newRunner(cfg, reg, log)
		if err != nil {
			return nil, withRemedy(fmt.Errorf("helper: %w", err), remedySettings)
		}
		defer runner.Close()
		deps.Helper = runner
	}
	if !cfg.Standalone() {
		if deps.Ledger, deps.NoLedger, err = planLedger(cfg, o); err != nil {
			return nil, withRemedy(err, remedyFile)
		}
	}
	p, err := plan.New(plan.Settings{
		Site: cfg.Site, Region: cfg.Region, Edge: name, Workers: cfg.Workers, Cluster: !cfg.Standalone(),
		Upgrade: upgrade.Settings{Enabled: cfg.Features.Upgrades, Repository: cfg.UpgradesRepository, Optional: cfg.UpgradesOptional},
	}, deps)
	if err != nil {
		return nil, err
	}
	return p.Plan(ctx)
}

// planLedger is the ledger reader of a cluster-mode plan, or why there is none.
func planLedger(cfg *config.Config, o PlanOptions) (*plan.Ledger, string, error) {
	if o.ReaderToken == "" && o.ReaderCert == "" {
		return nil, noReaderCredential, nil
	}
	hc := o.CoordinatorHTTP
	if hc == nil {
		// The edge's TLS settings with the reader's certificate: an edge's own certificate is
		// bound to the edge and does not open the reads.
		rc := *cfg
		rc.CoordinatorTLSCert, rc.CoordinatorTLSKey = o.ReaderCert, o.ReaderKey
		var err error
		if hc, err = coordinatorHTTP(&rc); err != nil {
			return nil, "", fmt.Errorf("reader certificate: %w", err)
		}
	}
	opts := []api.Option{api.WithHTTPClient(hc)}
	if o.ReaderToken != "" {
		opts = append(opts, api.WithToken(o.ReaderToken))
	}
	client, err := api.NewClient(cfg.Coordinators, opts...)
	if err != nil {
		return nil, "", fmt.Errorf("coordinators: %w", err)
	}
	l, err := plan.NewLedger(client)
	return l, "", err
}
