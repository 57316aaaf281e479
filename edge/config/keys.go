// SPDX-License-Identifier: Apache-2.0

package config

import (
	"github.com/seed96588659/muster/pkg/settings"
)

// EnvPrefix starts every environment variable the edge reads.
const EnvPrefix = "MUSTER_EDGE"

// FlagConfig is the flag (and, as MUSTER_EDGE_CONFIG, the variable) naming the YAML file: it
// says where the keys come from, and is not one of them.
const FlagConfig = settings.FlagConfig

// schema lists every configuration key, choria-provisioner's first, in its own order, and how
// they read: durations as choria-provisioner's (Go's units plus d, w, M, y), a number where text
// belongs refused as its JSON decoding refused it.
func schema() *settings.Schema {
	return &settings.Schema{EnvPrefix: EnvPrefix, Keys: keys(), Durations: parseDuration, DurationExamples: "10s, 5m, 1h, 1d, 1y"}
}

func keys() []settings.Key {
	return []settings.Key{
		{Name: "workers", Kind: settings.Int, Default: DefaultWorkers, Flag: "workers", Usage: "hosts provisioned at once"},
		{Name: "interval", Kind: settings.Duration, Default: "1m", Flag: "interval", Usage: "time between discovery sweeps, at least 1m (choria durations: 5m, 1h, 1d)"},
		{Name: "logfile", Kind: settings.String, Usage: "log file, empty for standard error"},
		{Name: "loglevel", Kind: settings.String, Default: "info", Flag: "loglevel", Usage: "debug, info, warn or error"},
		{Name: "helper", Kind: settings.String, Flag: "helper", Usage: "helper command line (shell quoting)"},
		{Name: "token", Kind: settings.String, Secret: true, Usage: "provisioning token"},
		{Name: "lifecycle_component", Kind: settings.String, Default: DefaultLifecycleComponent, Usage: "component of the startup events of new nodes"},
		{Name: "choria_insecure", Kind: settings.Bool, Usage: "disable TLS to the broker"},
		{Name: "site", Kind: settings.String, Flag: "site", Usage: "site label on every metric"},
		{Name: "monitor_port", Kind: settings.Int, Flag: "monitor-port", Usage: "port for /metrics, 0 for none"},
		{Name: "broker_port", Kind: settings.Int, Ignored: "choria-provisioner never read it either; the broker address comes from the Choria client configuration (choria_config)"},
		{Name: "broker_provisioning_password", Kind: settings.String, Secret: true, Usage: "broker provisioning client password"},
		{Name: "cert_deny_list", Kind: settings.List, Default: DefaultCertDenyList(), Usage: "regular expressions of names a CSR may not ask for"},
		{Name: "jwt_verify_cert", Kind: settings.String, Usage: "file or hex ed25519 key verifying provisioning.jwt"},
		{Name: "jwt_signing_key", Kind: settings.String, Usage: "file of the key that signs server JWTs"},
		{Name: "jwt_signing_token", Kind: settings.String, Usage: "file of the client JWT chaining server JWTs to the issuer"},
		{Name: "server_jwt_validity", Kind: settings.Duration, Default: "1y", Usage: "validity of server JWTs"},
		{Name: "rego_policy", Kind: settings.String, Ignored: "choria-provisioner never read it either; the helper's reply carries opa_policies per node"},
		{Name: "leader_election", Kind: settings.Bool, Usage: "campaign in choria-provisioner's Choria Streams election (key provisioner) and provision only while leading; the broker needs Choria Streams"},
		{Name: "upgrades_repository", Kind: settings.String, Usage: "go-updater repository URL"},
		{Name: "upgrades_optional", Kind: settings.Bool, Usage: "go on provisioning when an upgrade fails"},
		{Name: "features.pki", Kind: settings.Bool, Usage: "x509 enrollment"},
		{Name: "features.jwt", Kind: settings.Bool, Usage: "fetch and verify provisioning.jwt"},
		{Name: "features.ed25519", Kind: settings.Bool, Usage: "organization issuer enrollment (implies features.jwt)"},
		{Name: "features.upgrades", Kind: settings.Bool, Usage: "server version upgrades"},

		{Name: "choria_config", Kind: settings.String, Flag: "choria-config", Usage: "Choria client configuration file (default: Choria's user configuration if it exists)"},
		{Name: "broker_connect_timeout", Kind: settings.Duration, Default: "1m", Flag: "broker-connect-timeout", Usage: "how long the edge tries to reach the broker at start before it stops with an error"},
		{Name: "choria_identity", Kind: settings.String, Flag: "choria-identity", Usage: "Choria identity to connect as, instead of the client configuration's"},
		{Name: "region", Kind: settings.String, Flag: "region", Usage: "region to provision (default: site, else \"default\")"},
		{Name: "edge_name", Kind: settings.String, Flag: "edge-name", Usage: "this edge's name, also the sender id of its Choria requests (default: its Choria identity)"},
		{Name: "helper_timeout", Kind: settings.Duration, Default: "10s", Usage: "time limit of one helper call"},
		{Name: "helper_rate", Kind: settings.Int, Usage: "helper calls started per second at most, 0 for no limit (a helper that calls a throttling CA or inventory service)"},
		{Name: "helper_persistent", Kind: settings.Bool, Flag: "helper-persistent", Usage: "keep one helper process for many requests"},
		{Name: "helper_environment", Kind: settings.List, Usage: "names of further environment variables the helper gets (it always gets PATH, HOME, LANG, LC_*, TZ and TMPDIR, never MUSTER_*)"},
		{Name: "log_format", Kind: settings.String, Default: LogText, Flag: "log-format", Usage: "text or json"},
		{Name: "request_signing", Kind: settings.String, Default: SigningAuto, Usage: "auto, always or never"},
		{Name: "pause_token", Kind: settings.String, Secret: true, Usage: "bearer token of the pause/resume endpoint; empty disables it"},
		{Name: "batch_size", Kind: settings.Int, Default: DefaultBatchSize, Usage: "nodes per lease acquire"},
		{Name: "monitor_bind", Kind: settings.String, Flag: "monitor-bind", Usage: "address monitor_port listens on, empty for all interfaces"},
		{Name: "coordinators", Kind: settings.List, Flag: "coordinators", Usage: "coordinator member URLs; none for standalone"},
		{Name: "coordinator_token", Kind: settings.String, Secret: true, Usage: "bearer token of this edge towards the coordinators (bound there to edge_name and region)"},
		{Name: "coordinator_tls_cert", Kind: settings.String, Usage: "PEM client certificate towards the coordinators (its common name is edge_name)"},
		{Name: "coordinator_tls_key", Kind: settings.String, Usage: "PEM private key of coordinator_tls_cert"},
		{Name: "coordinator_tls_ca", Kind: settings.String, Usage: "PEM CA the coordinators' certificates chain to (default: the system's)"},
		{Name: "lease_margin", Kind: settings.Duration, Default: "2s", Usage: "time taken off every lease before the edge stops acting on it (covers calls still in flight)"},
		{Name: "duplicate_window", Kind: settings.Duration, Default: "500ms", Usage: "least time from a node's last jwt, gen25519 or gencsr reply to its configure: a second machine answering to the node's identity within it stops the node's flow (duplicate_responder); at most 10s, 0 sends configure at once"},
		{Name: "new_node_check_timeout", Kind: settings.Duration, Default: "2s", Usage: "reply window of the one rpcutil#ping a node this edge has not seen answer before gets before it is registered (no retry); one that does not answer is not registered; 0: no check (every discovered identity is registered). At most 30s"},
		{Name: "new_nodes_per_sweep", Kind: settings.Int, Default: DefaultNewNodesPerSweep, Usage: "most new identities one discovery sweep takes in (chosen at random when more answer); the rest wait for a later sweep"},
		{Name: "new_nodes_rate", Kind: settings.Int, Default: DefaultNewNodesRate, Usage: "new identities this edge takes in per second, from sweeps and startup events together, after a burst of new_nodes_burst"},
		{Name: "new_nodes_burst", Kind: settings.Int, Default: DefaultNewNodesBurst, Usage: "new identities this edge takes in at once before new_nodes_rate applies (at least the largest boot storm of its region)"},
		{Name: "discovery_max_nodes", Kind: settings.Int, Default: DefaultDiscoveryMaxNodes, Usage: "most identities one discovery sweep reads; a sweep that reaches it ends there"},
		{Name: "state_dir", Kind: settings.String, Default: DefaultStateDir, Flag: "state-dir", Usage: "directory of the cluster edge's journal of restarts, upgrades and shutdowns sent and not yet reported (file journal-<edge_name>)"},
		{Name: "call_history", Kind: settings.String, Usage: "advanced, for tests: file the cluster edge appends each register, acquire, renew and report to as JSON lines, with its request, answer and monotonic times (the chaos suite checks them for linearizability); empty for none"},
	}
}

// Keys returns every configuration key's name as written in the file.
func Keys() []string { return schema().Names() }

// EnvName is the environment variable of a key: EnvName("features.jwt") is MUSTER_EDGE_FEATURES_JWT.
func EnvName(key string) string { return settings.EnvName(EnvPrefix, key) }
