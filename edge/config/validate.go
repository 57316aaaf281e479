// SPDX-License-Identifier: Apache-2.0

package config

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"

	"github.com/kballard/go-shellquote"

	"github.com/seed96588659/muster/pkg/settings"
)

// Validate checks every value; the error joins one FieldError per invalid key. It does not
// enforce MinInterval, which Load applies to file, environment and flags only, so tests may
// build a Config with a short interval.
func (c *Config) Validate() error {
	e := c.validate()
	return e.Err()
}

var (
	// Regions name lease sets, metric labels and coordinator API paths.
	regionPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)
	// Edge names are usually Choria identities: host names, or names such as provisioner_signer.
	edgeNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.@:-]{0,252}$`)
	hostPattern     = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$`)
	envNamePattern  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

func (c *Config) validate() settings.Errors {
	var e settings.Errors
	if c.Workers < 1 {
		e.Add("workers", "%d is below the minimum of 1", c.Workers)
	}
	if c.Interval <= 0 {
		e.Add("interval", "%s is not a positive duration", c.Interval)
	}
	switch strings.ToLower(c.LogLevel) {
	case "trace", "debug", "info", "warn", "warning", "error", "fatal", "panic":
	default:
		e.Add("loglevel", "%q is not one of debug, info, warn, error", c.LogLevel)
	}
	if words, err := shellquote.Split(c.Helper); err != nil {
		e.Add("helper", "cannot be split into words: %v", err)
	} else if len(words) == 0 {
		e.Add("helper", "is required: the command that returns each node's configuration")
	}
	if c.LifecycleComponent == "" {
		e.Add("lifecycle_component", "is required")
	} else if strings.ContainsAny(c.LifecycleComponent, ".>*") {
		e.Add("lifecycle_component", "%q must not contain '.', '>' or '*' (it is one token of an event subject)", c.LifecycleComponent)
	}
	checkPort(&e, "monitor_port", c.MonitorPort)
	for i, re := range c.CertDenyList {
		if _, err := regexp.Compile(re); err != nil {
			e.Add("cert_deny_list", "item %d %q is not a regular expression: %v", i, re, err)
			break
		}
	}
	if c.ServerJWTValidity <= 0 {
		e.Add("server_jwt_validity", "%s is not a positive duration", c.ServerJWTValidity)
	}
	if c.UpgradesRepository != "" {
		if u, err := url.Parse(c.UpgradesRepository); err != nil || u.Scheme == "" {
			e.Add("upgrades_repository", "%q is not a URL such as https://repo.example.net/choria", c.UpgradesRepository)
		}
	}
	c.validateFeatures(&e)
	if !regionPattern.MatchString(c.Region) {
		e.Add("region", "%q is not a region name (letters, digits, '_', '.', '-'; at most 64; when unset it is taken from site)", c.Region)
	}
	if c.EdgeName != "" && !edgeNamePattern.MatchString(c.EdgeName) {
		e.Add("edge_name", "%q is not an edge name (letters, digits, '_', '.', '@', ':', '-')", c.EdgeName)
	}
	if c.ChoriaIdentity != "" && !edgeNamePattern.MatchString(c.ChoriaIdentity) {
		e.Add("choria_identity", "%q is not a Choria identity (letters, digits, '_', '.', '@', ':', '-')", c.ChoriaIdentity)
	}
	for i, name := range c.HelperEnvironment {
		switch {
		case !envNamePattern.MatchString(name):
			e.Add("helper_environment", "item %d %q is not an environment variable name (letters, digits, '_'; not starting with a digit)", i, name)
		case strings.HasPrefix(strings.ToUpper(name), "MUSTER_"):
			e.Add("helper_environment", "item %d %q: MUSTER_ variables are the edge's own (its tokens among them) and never passed to a helper", i, name)
		}
	}
	if c.HelperRate < 0 {
		e.Add("helper_rate", "%d is negative; 0 means no limit", c.HelperRate)
	}
	if c.HelperTimeout <= 0 {
		e.Add("helper_timeout", "%s is not a positive duration", c.HelperTimeout)
	}
	switch c.LogFormat {
	case LogText, LogJSON:
	default:
		e.Add("log_format", "%q is not text or json", c.LogFormat)
	}
	switch c.RequestSigning {
	case SigningAuto, SigningAlways, SigningNever:
	default:
		e.Add("request_signing", "%q is not auto, always or never", c.RequestSigning)
	}
	if c.BatchSize < 1 {
		e.Add("batch_size", "%d is below the minimum of 1", c.BatchSize)
	}
	if c.MonitorBind != "" && net.ParseIP(c.MonitorBind) == nil && !hostPattern.MatchString(c.MonitorBind) {
		e.Add("monitor_bind", "%q is not an IP address or host name (give the port in monitor_port)", c.MonitorBind)
	}
	if err := checkCoordinators(c.Coordinators); err != nil {
		e.Add("coordinators", "%v", err)
	} else {
		c.validateCluster(&e)
	}
	if c.BrokerConnectTimeout <= 0 {
		e.Add("broker_connect_timeout", "%s is not a positive duration", c.BrokerConnectTimeout)
	}
	if c.LeaseMargin <= 0 {
		e.Add("lease_margin", "%s is not a positive duration", c.LeaseMargin)
	}
	if c.DuplicateWindow < 0 || c.DuplicateWindow > MaxDuplicateWindow {
		e.Add("duplicate_window", "%s is not between 0 and %s (every flow with a credential step waits it out under its lease)", c.DuplicateWindow, MaxDuplicateWindow)
	}
	if c.NewNodeCheckTimeout < 0 || c.NewNodeCheckTimeout > MaxNewNodeCheckTimeout {
		e.Add("new_node_check_timeout", "%s is not between 0 (no check) and %s", c.NewNodeCheckTimeout, MaxNewNodeCheckTimeout)
	}
	for _, n := range []struct {
		key string
		v   int
	}{
		{"new_nodes_per_sweep", c.NewNodesPerSweep}, {"new_nodes_rate", c.NewNodesRate},
		{"new_nodes_burst", c.NewNodesBurst}, {"discovery_max_nodes", c.DiscoveryMaxNodes},
	} {
		if n.v < 1 {
			e.Add(n.key, "%d is below the minimum of 1", n.v)
		}
	}
	c.refusePlaceholders(&e)
	return e
}

// refusePlaceholders refuses a secret left at the example value the packages ship: anyone who
// read the package would hold it.
func (c *Config) refusePlaceholders(e *settings.Errors) {
	for _, s := range []struct{ key, value string }{
		{"token", c.Token}, {"broker_provisioning_password", c.BrokerProvisioningPassword},
		{"pause_token", c.PauseToken}, {"coordinator_token", c.CoordinatorToken},
	} {
		if settings.Placeholder(s.value) {
			e.Add(s.key, "%s", settings.PlaceholderReason)
		}
	}
}

// validateCluster checks the keys of cluster mode: a credential the coordinators can bind to this
// edge, and a client certificate only with its key and over https.
func (c *Config) validateCluster(e *settings.Errors) {
	if (c.CoordinatorTLSCert == "") != (c.CoordinatorTLSKey == "") {
		e.Add("coordinator_tls_key", "coordinator_tls_cert and coordinator_tls_key must be given together")
	}
	if c.Standalone() {
		if c.CallHistory != "" {
			e.Add("call_history", "records the calls to the coordinators: set coordinators too (a standalone edge makes none)")
		}
		return
	}
	if c.StateDir == "" {
		e.Add("state_dir", "is required with coordinators: the edge journals the restarts it sends there, so a restarted edge can still report them")
	}
	if c.CoordinatorToken == "" && c.CoordinatorTLSCert == "" {
		e.Add("coordinator_token", "is required with coordinators (or coordinator_tls_cert and coordinator_tls_key): the coordinators accept only edges with a credential bound to their name and region (set it in the file or %s)", EnvName("coordinator_token"))
	}
	if c.CoordinatorTLSCert != "" {
		for i, s := range c.Coordinators {
			if !strings.HasPrefix(strings.ToLower(s), "https://") {
				e.Add("coordinator_tls_cert", "coordinators item %d %q is not https: a client certificate needs TLS", i, s)
				break
			}
		}
	}
}

// validateFeatures holds choria-provisioner's feature rules, plus the settings each feature cannot work
// without (choria-provisioner accepted those and failed every node).
func (c *Config) validateFeatures(e *settings.Errors) {
	f := c.Features
	if f.PKI && f.ED25519 {
		e.Add("features.ed25519", "cannot be on together with features.pki: choose x509 enrollment or organization issuer enrollment")
	}
	if f.ED25519 && !f.JWT {
		e.Add("features.jwt", "must be on when features.ed25519 is on")
	}
	if f.JWT && c.JWTVerifyCert == "" {
		e.Add("jwt_verify_cert", "is required when features.jwt is on: the file or hex ed25519 key that signed provisioning.jwt")
	}
	if f.ED25519 && c.JWTSigningKey == "" {
		e.Add("jwt_signing_key", "is required when features.ed25519 is on: the key that signs server JWTs")
	}
	if f.Upgrades && c.UpgradesRepository == "" && !c.UpgradesOptional {
		e.Add("upgrades_repository", "is required when features.upgrades is on (unless upgrades_optional)")
	}
}

func checkPort(e *settings.Errors, key string, port int) {
	if port < 0 || port > 65535 {
		e.Add(key, "%d is not a port (0 to 65535)", port)
	}
}

// checkCoordinators accepts http and https URLs of distinct members. Credentials in a URL would
// reach log lines, so they are refused.
func checkCoordinators(urls []string) error {
	seen := map[string]bool{}
	for i, s := range urls {
		u, err := url.Parse(s)
		switch {
		case err != nil:
			return fmt.Errorf("item %d %q is not a URL: %w", i, s, err)
		case u.Scheme != "http" && u.Scheme != "https":
			return fmt.Errorf("item %d %q: scheme must be http or https", i, s)
		case u.Host == "" || u.Hostname() == "":
			return fmt.Errorf("item %d %q has no host", i, s)
		case u.User != nil:
			return fmt.Errorf("item %d: credentials do not belong in a URL, where they would reach log lines", i)
		case u.RawQuery != "" || u.Fragment != "":
			return fmt.Errorf("item %d %q must not have a query or fragment", i, s)
		}
		if p := u.Port(); p != "" {
			var n int
			if _, err := fmt.Sscanf(p, "%d", &n); err != nil || n < 1 || n > 65535 {
				return fmt.Errorf("item %d %q: port %s is not a port", i, s, p)
			}
		}
		norm := strings.TrimSuffix(u.String(), "/")
		if seen[norm] {
			return fmt.Errorf("item %d %q is listed twice", i, s)
		}
		seen[norm] = true
	}
	return nil
}
