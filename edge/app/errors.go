// SPDX-License-Identifier: Apache-2.0

package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/choria-io/go-choria/choria"

	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/edge/journal"
)

// StartError is a failure to start the edge, with what the operator can do about it.
type StartError struct {
	Err error
	// Remedy says what to change before starting again.
	Remedy string
}

// Error is the failure alone; Remedy is shown beside it.
func (e *StartError) Error() string { return e.Err.Error() }

// Unwrap returns the failure.
func (e *StartError) Unwrap() error { return e.Err }

const (
	remedySettings = "correct the setting the error names (file, MUSTER_EDGE_* variable or flag; docs/configure.md lists them) and start again"
	remedyFile     = "make the file the error names exist and readable by the edge's user, or correct the setting that names it"
	remedyIdentity = "check the client identity in choria_config (or choria_identity) and its credentials: the certificate, key and CA files " +
		"(plugin.security.*) must exist, be readable by the edge's user, parse, and be issued for that identity by the broker's CA"
)

// withRemedy makes err a *StartError with remedy, unless it already carries one.
func withRemedy(err error, remedy string) error {
	var se *StartError
	if err == nil || errors.As(err, &se) {
		return err
	}
	return &StartError{Err: err, Remedy: remedy}
}

// journalError explains a journal that would not open.
func journalError(cfg *config.Config, name, path string, err error) error {
	err = fmt.Errorf("state_dir: %w", err)
	switch {
	case errors.Is(err, journal.ErrLocked):
		return withRemedy(err, fmt.Sprintf("stop the other muster-edge that runs as edge_name %q on state_dir %s, or give this one its own edge_name or state_dir", name, cfg.StateDir))
	case errors.Is(err, journal.ErrCorrupt):
		return withRemedy(err, fmt.Sprintf("move %s aside and start again: the edge starts without it, and the calls it holds as sent and not yet reported are then settled by the coordinators' ledger alone", path))
	}
	return withRemedy(err, fmt.Sprintf("make state_dir %s a directory the edge's user can write (systemd: StateDirectory=)", cfg.StateDir))
}

// brokerError explains a failed connection to the broker: none within broker_connect_timeout,
// or one refused before it was tried (the client's credentials).
func brokerError(ctx context.Context, cfg *config.Config, fw *choria.Framework, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("stopped while connecting to the broker: %w", err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return withRemedy(fmt.Errorf("broker: no connection to %s within broker_connect_timeout (%s): %w", brokers(fw), cfg.BrokerConnectTimeout, err),
			"start the broker, or point plugin.choria.middleware_hosts (or its SRV records) in choria_config at it; "+
				"go-choria's warnings above say why each try failed, and broker_connect_timeout sets how long the edge tries")
	}
	return withRemedy(fmt.Errorf("broker: %w", err), remedyIdentity)
}

// brokers names the brokers fw connects to, for an error.
func brokers(fw *choria.Framework) string {
	servers, err := fw.MiddlewareServers()
	if err != nil || servers.Count() == 0 {
		return "the configured brokers"
	}
	return strings.Join(servers.Strings(), ", ")
}
