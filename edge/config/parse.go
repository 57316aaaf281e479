// SPDX-License-Identifier: Apache-2.0

package config

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/choria-io/go-choria/choria"

	"github.com/seed96588659/muster/pkg/settings"
)

// parse reads every key from r into a Config, applies choria-provisioner's derived values, enforces
// the minimums that hold for file, environment and flags, and validates the result.
func parse(r *settings.Reader) (*Config, error) {
	c := &Config{
		Workers:                    r.Int("workers"),
		Interval:                   r.Duration("interval"),
		LogFile:                    r.String("logfile"),
		LogLevel:                   strings.ToLower(r.String("loglevel")),
		Helper:                     r.String("helper"),
		Token:                      r.String("token"),
		LifecycleComponent:         r.String("lifecycle_component"),
		Insecure:                   r.Bool("choria_insecure"),
		Site:                       r.String("site"),
		MonitorPort:                r.Int("monitor_port"),
		BrokerPort:                 r.Int("broker_port"),
		BrokerProvisioningPassword: r.String("broker_provisioning_password"),
		CertDenyList:               r.List("cert_deny_list"),
		JWTVerifyCert:              r.String("jwt_verify_cert"),
		JWTSigningKey:              r.String("jwt_signing_key"),
		JWTSigningToken:            r.String("jwt_signing_token"),
		ServerJWTValidity:          r.Duration("server_jwt_validity"),
		RegoPolicy:                 r.String("rego_policy"),
		LeaderElection:             r.Bool("leader_election"),
		UpgradesRepository:         r.String("upgrades_repository"),
		UpgradesOptional:           r.Bool("upgrades_optional"),
		Features: Features{
			PKI:      r.Bool("features.pki"),
			JWT:      r.Bool("features.jwt"),
			ED25519:  r.Bool("features.ed25519"),
			Upgrades: r.Bool("features.upgrades"),
		},
		ChoriaConfig:         r.String("choria_config"),
		ChoriaIdentity:       r.String("choria_identity"),
		BrokerConnectTimeout: r.Duration("broker_connect_timeout"),
		Region:               r.String("region"),
		EdgeName:             r.String("edge_name"),
		HelperTimeout:        r.Duration("helper_timeout"),
		HelperRate:           r.Int("helper_rate"),
		HelperPersistent:     r.Bool("helper_persistent"),
		HelperEnvironment:    r.List("helper_environment"),
		LogFormat:            strings.ToLower(r.String("log_format")),
		RequestSigning:       strings.ToLower(r.String("request_signing")),
		PauseToken:           r.String("pause_token"),
		BatchSize:            r.Int("batch_size"),
		MonitorBind:          r.String("monitor_bind"),
		Coordinators:         r.List("coordinators"),
		CoordinatorToken:     r.String("coordinator_token"),
		CoordinatorTLSCert:   r.String("coordinator_tls_cert"),
		CoordinatorTLSKey:    r.String("coordinator_tls_key"),
		CoordinatorTLSCA:     r.String("coordinator_tls_ca"),
		LeaseMargin:          r.Duration("lease_margin"),
		DuplicateWindow:      r.Duration("duplicate_window"),
		NewNodeCheckTimeout:  r.Duration("new_node_check_timeout"),
		NewNodesPerSweep:     r.Int("new_nodes_per_sweep"),
		NewNodesRate:         r.Int("new_nodes_rate"),
		NewNodesBurst:        r.Int("new_nodes_burst"),
		DiscoveryMaxNodes:    r.Int("discovery_max_nodes"),
		StateDir:             r.String("state_dir"),
		CallHistory:          r.String("call_history"),
	}
	r.Section("features")

	// choria-provisioner's derived values: workers 0 and an empty cert_deny_list mean the
	// default, ed25519 implies jwt, and the region is the site's unless set. A blank key already
	// read as its default.
	if c.Workers == 0 {
		c.Workers = DefaultWorkers
	}
	if len(c.CertDenyList) == 0 {
		c.CertDenyList = DefaultCertDenyList()
	}
	if c.Features.ED25519 {
		c.Features.JWT = true
	}
	if c.Region == "" {
		c.Region = c.Site
	}
	if c.Region == "" {
		c.Region = DefaultRegion
	}

	if !r.Has("interval") && c.Interval < MinInterval {
		r.Add("interval", "%s is below the minimum of 1m (the minimum protects the broker from discovery floods; valid examples: 5m, 1h)", c.Interval)
	}
	invalid := c.validate()
	r.Merge(&invalid)
	if err := r.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

// parseDuration reads a choria duration, as choria-provisioner does: Go's units plus d, w, M, y.
func parseDuration(s string) (time.Duration, error) {
	d, err := choria.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if choriaUnitOverflows(s) {
		return 0, errors.New("it is beyond the range of a duration, at most 292 years")
	}
	return d, nil
}

// choriaUnitOverflows is true when s counts weeks, days, months or years beyond what a
// time.Duration holds, or is not a number: choria.ParseDuration multiplies such a count without
// a check, so a large one wraps around into another duration, positive or negative.
func choriaUnitOverflows(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	var hours float64
	switch s[len(s)-1] {
	case 'w', 'W':
		hours = 7 * 24
	case 'd', 'D':
		hours = 24
	case 'M':
		hours = 30 * 24
	case 'y', 'Y':
		hours = 365 * 24
	default:
		return false // Go's own units, whose range time.ParseDuration checks
	}
	v, err := strconv.ParseFloat(s[:len(s)-1], 32)
	if err != nil {
		return false // choria.ParseDuration refuses it
	}
	h := math.Trunc(v * hours)
	return math.IsNaN(h) || math.Abs(h) > float64(math.MaxInt64/int64(time.Hour))
}
