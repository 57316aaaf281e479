// SPDX-License-Identifier: Apache-2.0

package config

import (
	"strings"
)

// EnvPrefix starts every environment variable the edge reads.
const EnvPrefix = "MUSTER_EDGE"

// FlagConfig is the flag (and, as MUSTER_EDGE_CONFIG, the variable) naming the YAML file: it
// says where the keys come from, and is not one of them.
const FlagConfig = "config"

type kind int

const (
	kString kind = iota
	kInt
	kBool
	kDuration
	kList
)

// key is one configuration key: its name in the file, how it reads, and its flag if it has one.
type key struct {
	name  string
	kind  kind
	def   any    // the default; "" / 0 / false / nil when the zero value is the default
	flag  string // "" for keys with no flag (secrets among them)
	usage string
	// ignored says why a key is accepted but has no effect here; such keys are warned about.
	ignored string
	secret  bool
}

// allKeys lists every configuration key; choria-provisioner's first, in its own order.
func allKeys() []key {
	return []key{
		{name: "workers", kind: kInt, def: DefaultWorkers, flag: "workers", usage: "hosts provisioned at once"},
		{name: "interval", kind: kDuration, def: "1m", flag: "interval", usage: "time between discovery sweeps, at least 1m (choria durations: 5m, 1h, 1d)"},
		{name: "logfile", kind: kString, usage: "log file, empty for standard error"},
		{name: "loglevel", kind: kString, def: "info", flag: "loglevel", usage: "debug, info, warn or error"},
		{name: "helper", kind: kString, flag: "helper", usage: "helper command line (shell quoting)"},
		{name: "token", kind: kString, secret: true, usage: "provisioning token"},
		{name: "lifecycle_component", kind: kString, def: DefaultLifecycleComponent, usage: "component of the startup events of new nodes"},
		{name: "choria_insecure", kind: kBool, usage: "disable TLS to the broker"},
		{name: "site", kind: kString, flag: "site", usage: "site label on every metric"},
		{name: "monitor_port", kind: kInt, flag: "monitor-port", usage: "port for /metrics, 0 for none"},
		{name: "broker_port", kind: kInt, ignored: "choria-provisioner never read it either; the broker address comes from the Choria client configuration (choria_config)"},
		{name: "broker_provisioning_password", kind: kString, secret: true, usage: "broker provisioning client password"},
		{name: "cert_deny_list", kind: kList, usage: "regular expressions of names a CSR may not ask for"},
		{name: "jwt_verify_cert", kind: kString, usage: "file or hex ed25519 key verifying provisioning.jwt"},
		{name: "jwt_signing_key", kind: kString, usage: "file of the key that signs server JWTs"},
		{name: "jwt_signing_token", kind: kString, usage: "file of the client JWT chaining server JWTs to the issuer"},
		{name: "server_jwt_validity", kind: kDuration, def: "1y", usage: "validity of server JWTs"},
		{name: "rego_policy", kind: kString, ignored: "choria-provisioner never read it either; the helper's reply carries opa_policies per node"},
		{name: "leader_election", kind: kBool, ignored: "every Muster edge is active; the coordinator's leases replace leader election"},
		{name: "upgrades_repository", kind: kString, usage: "go-updater repository URL"},
		{name: "upgrades_optional", kind: kBool, usage: "go on provisioning when an upgrade fails"},
		{name: "features.pki", kind: kBool, usage: "x509 enrollment"},
		{name: "features.jwt", kind: kBool, usage: "fetch and verify provisioning.jwt"},
		{name: "features.ed25519", kind: kBool, usage: "organization issuer enrollment (implies features.jwt)"},
		{name: "features.upgrades", kind: kBool, usage: "server version upgrades"},

		{name: "choria_config", kind: kString, flag: "choria-config", usage: "Choria client configuration file (default: Choria's user configuration if it exists)"},
		{name: "broker_connect_timeout", kind: kDuration, def: "1m", flag: "broker-connect-timeout", usage: "how long the edge tries to reach the broker at start before it stops with an error"},
		{name: "choria_identity", kind: kString, flag: "choria-identity", usage: "Choria identity to connect as, instead of the client configuration's"},
		{name: "region", kind: kString, flag: "region", usage: "region to provision (default: site, else \"default\")"},
		{name: "edge_name", kind: kString, flag: "edge-name", usage: "this edge's name, also the sender id of its Choria requests (default: its Choria identity)"},
		{name: "helper_timeout", kind: kDuration, def: "10s", usage: "time limit of one helper call"},
		{name: "helper_rate", kind: kInt, usage: "helper calls started per second at most, 0 for no limit (a helper that calls a throttling CA or inventory service)"},
		{name: "helper_persistent", kind: kBool, flag: "helper-persistent", usage: "keep one helper process for many requests"},
		{name: "helper_environment", kind: kList, usage: "names of further environment variables the helper gets (it always gets PATH, HOME, LANG, LC_*, TZ and TMPDIR, never MUSTER_*)"},
		{name: "log_format", kind: kString, def: LogText, flag: "log-format", usage: "text or json"},
		{name: "request_signing", kind: kString, def: SigningAuto, usage: "auto, always or never"},
		{name: "pause_token", kind: kString, secret: true, usage: "bearer token of the pause/resume endpoint; empty disables it"},
		{name: "batch_size", kind: kInt, def: DefaultBatchSize, usage: "nodes per lease acquire"},
		{name: "monitor_bind", kind: kString, flag: "monitor-bind", usage: "address monitor_port listens on, empty for all interfaces"},
		{name: "coordinators", kind: kList, flag: "coordinators", usage: "coordinator member URLs; none for standalone"},
		{name: "coordinator_token", kind: kString, secret: true, usage: "bearer token of this edge towards the coordinators (bound there to edge_name and region)"},
		{name: "coordinator_tls_cert", kind: kString, usage: "PEM client certificate towards the coordinators (its common name is edge_name)"},
		{name: "coordinator_tls_key", kind: kString, usage: "PEM private key of coordinator_tls_cert"},
		{name: "coordinator_tls_ca", kind: kString, usage: "PEM CA the coordinators' certificates chain to (default: the system's)"},
		{name: "lease_margin", kind: kDuration, def: "2s", usage: "time taken off every lease before the edge stops acting on it (covers calls still in flight)"},
		{name: "state_dir", kind: kString, def: DefaultStateDir, flag: "state-dir", usage: "directory of the cluster edge's journal of restarts, upgrades and shutdowns sent and not yet reported (file journal-<edge_name>)"},
		{name: "call_history", kind: kString, usage: "advanced, for tests: file the cluster edge appends each register, acquire, renew and report to as JSON lines, with its request, answer and monotonic times (the chaos suite checks them for linearizability); empty for none"},
	}
}

// Keys returns every configuration key's name as written in the file.
func Keys() []string {
	ks := allKeys()
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.name
	}
	return out
}

// EnvName is the environment variable of a key: EnvName("features.jwt") is MUSTER_EDGE_FEATURES_JWT.
func EnvName(key string) string {
	return EnvPrefix + "_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

func lookupKey(name string) (key, bool) {
	for _, k := range allKeys() {
		if k.name == name {
			return k, true
		}
	}
	return key{}, false
}

// isSection reports whether name is a map of keys in the file, such as "features".
func isSection(name string) bool {
	for _, k := range allKeys() {
		if strings.HasPrefix(k.name, name+".") {
			return true
		}
	}
	return false
}
