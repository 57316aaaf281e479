// SPDX-License-Identifier: Apache-2.0

package config

import (
	"fmt"

	"github.com/kballard/go-shellquote"
)

// Redacted is the replacement for a secret that is set.
const Redacted = "[redacted]"

// Redacted returns the effective configuration by key, for logging: secrets that are set read
// as "[redacted]", unset ones as "", so the log still shows whether one was given; the helper
// reads as its program alone.
func (c *Config) Redacted() map[string]any {
	secret := func(s string) string {
		if s == "" {
			return ""
		}
		return Redacted
	}
	return map[string]any{
		"workers":                      c.Workers,
		"interval":                     c.Interval.String(),
		"logfile":                      c.LogFile,
		"loglevel":                     c.LogLevel,
		"helper":                       helperProgram(c.Helper),
		"token":                        secret(c.Token),
		"lifecycle_component":          c.LifecycleComponent,
		"choria_insecure":              c.Insecure,
		"site":                         c.Site,
		"monitor_port":                 c.MonitorPort,
		"broker_port":                  c.BrokerPort,
		"broker_provisioning_password": secret(c.BrokerProvisioningPassword),
		"cert_deny_list":               append([]string(nil), c.CertDenyList...),
		"jwt_verify_cert":              c.JWTVerifyCert,
		"jwt_signing_key":              c.JWTSigningKey,
		"jwt_signing_token":            c.JWTSigningToken,
		"server_jwt_validity":          c.ServerJWTValidity.String(),
		"rego_policy":                  c.RegoPolicy,
		"leader_election":              c.LeaderElection,
		"upgrades_repository":          c.UpgradesRepository,
		"upgrades_optional":            c.UpgradesOptional,
		"features": map[string]any{
			"pki":      c.Features.PKI,
			"jwt":      c.Features.JWT,
			"ed25519":  c.Features.ED25519,
			"upgrades": c.Features.Upgrades,
		},
		"choria_config":          c.ChoriaConfig,
		"choria_identity":        c.ChoriaIdentity,
		"broker_connect_timeout": c.BrokerConnectTimeout.String(),
		"region":                 c.Region,
		"edge_name":              c.EdgeName,
		"helper_timeout":         c.HelperTimeout.String(),
		"helper_rate":            c.HelperRate,
		"helper_persistent":      c.HelperPersistent,
		"helper_environment":     append([]string(nil), c.HelperEnvironment...),
		"log_format":             c.LogFormat,
		"request_signing":        c.RequestSigning,
		"pause_token":            secret(c.PauseToken),
		"batch_size":             c.BatchSize,
		"monitor_bind":           c.MonitorBind,
		"coordinators":           append([]string(nil), c.Coordinators...),
		"coordinator_token":      secret(c.CoordinatorToken),
		"coordinator_tls_cert":   c.CoordinatorTLSCert,
		"coordinator_tls_key":    c.CoordinatorTLSKey,
		"coordinator_tls_ca":     c.CoordinatorTLSCA,
		"lease_margin":           c.LeaseMargin.String(),
		"duplicate_window":       c.DuplicateWindow.String(),
		"new_node_check_timeout": c.NewNodeCheckTimeout.String(),
		"new_nodes_per_sweep":    c.NewNodesPerSweep,
		"new_nodes_rate":         c.NewNodesRate,
		"new_nodes_burst":        c.NewNodesBurst,
		"discovery_max_nodes":    c.DiscoveryMaxNodes,
		"state_dir":              c.StateDir,
		"call_history":           c.CallHistory,
		"file":                   c.File,
	}
}

// helperProgram is the helper command line without its arguments, which may hold secrets (the
// helper package logs argv[0] alone for the same reason). A line that does not split has no
// program to tell apart from its arguments, so it is hidden whole.
func helperProgram(line string) string {
	words, err := shellquote.Split(line)
	switch {
	case err != nil:
		return Redacted
	case len(words) == 0:
		return ""
	case len(words) == 1:
		return words[0]
	case len(words) == 2:
		return words[0] + " (1 argument hidden)"
	}
	return fmt.Sprintf("%s (%d arguments hidden)", words[0], len(words)-1)
}

// Secrets returns the values of the secret keys that are set (token, broker_provisioning_password,
// pause_token, coordinator_token), for hiding wherever they might be echoed.
func (c *Config) Secrets() []string {
	var out []string
	for _, s := range []string{c.Token, c.BrokerProvisioningPassword, c.PauseToken, c.CoordinatorToken} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
