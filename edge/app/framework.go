// SPDX-License-Identifier: Apache-2.0

package app

import (
	"fmt"
	"io"

	"github.com/choria-io/go-choria/choria"
	cconfig "github.com/choria-io/go-choria/config"
	"github.com/sirupsen/logrus"

	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/pkg/rpc"
)

// provisioningUser is the broker user choria-provisioner logs in as with
// broker_provisioning_password.
const provisioningUser = "provisioner"

// framework loads the Choria client configuration the way choria-provisioner does: collective
// provisioning, TLS off with choria_insecure, the provisioning broker user with its password.
func framework(cfg *config.Config, logTo io.Writer) (*choria.Framework, error) {
	ccfg, err := cconfig.NewConfig(cfg.ChoriaConfig)
	if err != nil {
		return nil, withRemedy(fmt.Errorf("choria_config: load %s: %w", cfg.ChoriaConfig, err),
			"point choria_config at a Choria client configuration this user can read (choria-provisioner's works unchanged)")
	}
	ccfg.Collectives = []string{"provisioning"}
	ccfg.MainCollective = "provisioning"
	if cfg.ChoriaIdentity != "" {
		ccfg.OverrideCertname = cfg.ChoriaIdentity
	}
	if cfg.Insecure {
		// choria-provisioner also flips go-choria's process-wide protocol.Secure; the edge's own
		// Conn decides signing per request instead, so no global is touched.
		ccfg.DisableTLS = true
		ccfg.Choria.SecurityProvider = "file"
	}
	if cfg.BrokerProvisioningPassword != "" {
		ccfg.Choria.NatsUser = provisioningUser
		ccfg.Choria.NatsPass = cfg.BrokerProvisioningPassword
	}
	// go-choria logs through logrus and would open its configured logfile for every framework;
	// its warnings go where the caller says instead.
	l := logrus.New()
	if logTo == nil {
		logTo = io.Discard
	}
	l.SetOutput(logTo)
	l.SetLevel(logrus.WarnLevel)
	ccfg.CustomLogger = l
	fw, err := choria.NewWithConfig(ccfg)
	if err != nil {
		return nil, withRemedy(fmt.Errorf("choria framework from %s: %w", cfg.ChoriaConfig, err), remedyIdentity)
	}
	if cfg.EdgeName != "" {
		// go-choria's provision agent keys a node's lock on sender id and caller id, and every
		// edge of a region may share one client configuration (so both ids): sending as the
		// edge's own name lets the lock tell them apart. Set after the framework is built, so
		// the certificate name go-choria took from the configured identity (as root) stays.
		fw.Config.Identity = cfg.EdgeName
	}
	return fw, nil
}

// signingMode maps request_signing to the connection's default: auto signs until the host flow
// has read the node's provisioning JWT.
func signingMode(mode string) rpc.Signing {
	switch mode {
	case config.SigningNever:
		return rpc.SignNever
	case config.SigningAlways:
		return rpc.SignAlways
	}
	return rpc.SignAuto
}
