// SPDX-License-Identifier: Apache-2.0

package config

import (
	"log/slog"
	"strings"
	"time"
)

// Defaults that differ from choria-provisioner's or are Muster's own.
const (
	// DefaultWorkers is the number of hosts provisioned at once; the work is I/O bound.
	DefaultWorkers = 64
	// DefaultBatchSize is the number of nodes asked for in one lease acquire.
	DefaultBatchSize = 256
	// DefaultLeaseMargin is taken off every lease before the edge stops acting on it.
	DefaultLeaseMargin = 2 * time.Second
	// DefaultBrokerConnectTimeout bounds the start's wait for the broker.
	DefaultBrokerConnectTimeout = time.Minute
	// DefaultStateDir is where a cluster edge keeps its journal (systemd's StateDirectory).
	DefaultStateDir = "/var/lib/muster-edge"
	// DefaultDuplicateWindow is the least time from the last credential reply to configure, in
	// which a second responder's reply is still seen: about twice the slowest gencsr measured on
	// a real go-choria v0.30.0 server with features.pki (an RSA-2048 key each; 16 / 65 / 240 ms
	// min / median / max), so a real node on a loaded machine still answers within it.
	DefaultDuplicateWindow = 500 * time.Millisecond
	// MaxDuplicateWindow bounds duplicate_window: every flow waits it out under its lease.
	MaxDuplicateWindow = 10 * time.Second
	// DefaultNewNodeCheckTimeout is the reply window of a new node's check: a node in
	// provisioning mode answers rpcutil#ping within milliseconds.
	DefaultNewNodeCheckTimeout = 2 * time.Second
	// MaxNewNodeCheckTimeout bounds new_node_check_timeout.
	MaxNewNodeCheckTimeout = 30 * time.Second
	// DefaultNewNodesPerSweep, DefaultNewNodesRate and DefaultNewNodesBurst bound the identities
	// new to an edge it takes in: per sweep, per second, at once.
	DefaultNewNodesPerSweep = 10_000
	DefaultNewNodesRate     = 1000
	DefaultNewNodesBurst    = 10_000
	// DefaultDiscoveryMaxNodes bounds the identities one sweep reads.
	DefaultDiscoveryMaxNodes = 50_000
	// DefaultHelperTimeout bounds one helper call.
	DefaultHelperTimeout = 10 * time.Second
	// DefaultServerJWTValidity is choria-provisioner's default validity of the server JWTs it signs ("1y").
	DefaultServerJWTValidity = 365 * 24 * time.Hour
	// DefaultLifecycleComponent is the component of the startup events of servers in provisioning mode.
	DefaultLifecycleComponent = "provision_mode_server"
	// DefaultRegion is the region when neither region nor site is set.
	DefaultRegion = "default"
	// MinInterval is choria-provisioner's smallest discovery interval, enforced for file, environment and flags.
	MinInterval = time.Minute
)

// Request signing modes (request_signing).
const (
	// SigningAuto signs until the node's provisioning JWT says it does not verify requests (chs=false).
	SigningAuto = "auto"
	// SigningAlways signs every request.
	SigningAlways = "always"
	// SigningNever never signs.
	SigningNever = "never"
)

// Log formats (log_format).
const (
	// LogText is slog's text handler.
	LogText = "text"
	// LogJSON is slog's JSON handler.
	LogJSON = "json"
)

// DefaultCertDenyList returns choria-provisioner's default cert_deny_list: names a node may not ask for.
func DefaultCertDenyList() []string {
	return []string{
		`\.privileged.mcollective$`,
		`\.privileged.choria$`,
		`\.mcollective$`,
		`\.choria$`,
	}
}

// Features are choria-provisioner's features.* switches.
type Features struct {
	PKI, JWT, ED25519, Upgrades bool
}

// Config is the edge's effective configuration.
type Config struct {
	// choria-provisioner keys

	// Workers is how many hosts are provisioned at once (workers).
	Workers int
	// Interval is the time between discovery sweeps (interval).
	Interval time.Duration
	// LogFile is where logs go, "" for standard error (logfile).
	LogFile string
	// LogLevel is one of trace, debug, info, warn, warning, error, fatal, panic (loglevel).
	LogLevel string
	// Helper is the helper's command line, split with shell quoting as choria-provisioner does (helper).
	Helper string
	// Token is the provisioning token nodes were given in provisioning.jwt (token). Secret.
	Token string
	// LifecycleComponent is the component of startup events that announce new nodes (lifecycle_component).
	LifecycleComponent string
	// Insecure disables TLS to the broker (choria_insecure).
	Insecure bool
	// Site labels every metric (site).
	Site string
	// MonitorPort serves /metrics when > 0 (monitor_port).
	MonitorPort int
	// BrokerPort is accepted and ignored (broker_port).
	BrokerPort int
	// BrokerProvisioningPassword is the broker's provisioning client password (broker_provisioning_password). Secret.
	BrokerProvisioningPassword string
	// CertDenyList holds regular expressions of names a CSR may not ask for (cert_deny_list).
	CertDenyList []string
	// JWTVerifyCert is the file, or hex ed25519 key, that verifies provisioning.jwt (jwt_verify_cert).
	JWTVerifyCert string
	// JWTSigningKey is the file of the key that signs server JWTs (jwt_signing_key).
	JWTSigningKey string
	// JWTSigningToken is the file of the client JWT that chains server JWTs to an issuer (jwt_signing_token).
	JWTSigningToken string
	// ServerJWTValidity is the validity of the server JWTs signed (server_jwt_validity).
	ServerJWTValidity time.Duration
	// RegoPolicy is accepted and ignored (rego_policy).
	RegoPolicy string
	// LeaderElection makes the edge campaign in choria-provisioner's election and provision only
	// while it leads (leader_election).
	LeaderElection bool
	// UpgradesRepository is the go-updater repository URL (upgrades_repository).
	UpgradesRepository string
	// UpgradesOptional lets provisioning go on when an upgrade fails (upgrades_optional).
	UpgradesOptional bool
	// Features are the features.* switches.
	Features Features

	// Muster keys

	// ChoriaConfig is the Choria client configuration file (choria_config).
	ChoriaConfig string
	// BrokerConnectTimeout is how long the start waits for the broker before it fails
	// (broker_connect_timeout).
	BrokerConnectTimeout time.Duration
	// ChoriaIdentity overrides the Choria client configuration's identity, "" keeps it (choria_identity).
	ChoriaIdentity string
	// Region is the region whose nodes this edge provisions (region; default site, else "default").
	Region string
	// EdgeName names this edge to the coordinator and is the sender id of its Choria requests, on
	// which nodes key their provisioning lock (edge_name); "" means its Choria identity for both.
	EdgeName string
	// HelperTimeout bounds one helper call (helper_timeout).
	HelperTimeout time.Duration
	// HelperPersistent keeps one helper process running for many requests (helper_persistent).
	HelperPersistent bool
	// HelperRate bounds the helper calls started per second; 0 is no limit (helper_rate).
	HelperRate int
	// HelperEnvironment names variables of the edge's environment the helper gets besides
	// PATH, HOME, LANG, LC_*, TZ and TMPDIR (helper_environment).
	HelperEnvironment []string
	// LogFormat is text or json (log_format).
	LogFormat string
	// RequestSigning is auto, always or never (request_signing).
	RequestSigning string
	// PauseToken guards the pause/resume endpoint, which is off while it is "" (pause_token). Secret.
	PauseToken string
	// BatchSize is the number of nodes per lease acquire (batch_size).
	BatchSize int
	// MonitorBind is the address monitor_port listens on, "" for all interfaces (monitor_bind).
	MonitorBind string
	// Coordinators are coordinator member URLs; empty means standalone (coordinators).
	Coordinators []string
	// CoordinatorToken is the edge's bearer token towards the coordinators (coordinator_token). Secret.
	CoordinatorToken string
	// CoordinatorTLSCert and CoordinatorTLSKey are the edge's client certificate towards the
	// coordinators (coordinator_tls_cert, coordinator_tls_key).
	CoordinatorTLSCert string
	CoordinatorTLSKey  string
	// CoordinatorTLSCA verifies the coordinators' certificates, "" for the system's roots (coordinator_tls_ca).
	CoordinatorTLSCA string
	// LeaseMargin is taken off every lease's TTL before the edge stops acting on it (lease_margin).
	LeaseMargin time.Duration
	// DuplicateWindow is the least time from a node's last jwt, gen25519 or gencsr reply to its
	// configure, in which a second responder is still caught (duplicate_window).
	DuplicateWindow time.Duration
	// NewNodeCheckTimeout is the reply window of the one check a node new to this edge gets
	// before it is registered (new_node_check_timeout).
	NewNodeCheckTimeout time.Duration
	// NewNodesPerSweep bounds the new identities one sweep takes in (new_nodes_per_sweep).
	NewNodesPerSweep int
	// NewNodesRate and NewNodesBurst bound the new identities taken in per second and at once
	// (new_nodes_rate, new_nodes_burst).
	NewNodesRate  int
	NewNodesBurst int
	// DiscoveryMaxNodes bounds the identities one sweep reads (discovery_max_nodes).
	DiscoveryMaxNodes int
	// StateDir holds the cluster edge's journal of calls sent and not yet reported (state_dir).
	StateDir string
	// CallHistory is the file the cluster edge records its calls to the coordinators in, "" for
	// none (call_history; for linearizability checks).
	CallHistory string
	// File is the configuration file loaded, "" if none.
	File string
}

// Defaults returns the configuration Load starts from, for callers that build a Config in Go.
// It leaves Helper, ChoriaConfig and EdgeName empty and Region at DefaultRegion.
func Defaults() *Config {
	return &Config{
		Workers:              DefaultWorkers,
		Interval:             MinInterval,
		LogLevel:             "info",
		LifecycleComponent:   DefaultLifecycleComponent,
		CertDenyList:         DefaultCertDenyList(),
		ServerJWTValidity:    DefaultServerJWTValidity,
		Region:               DefaultRegion,
		HelperTimeout:        DefaultHelperTimeout,
		LogFormat:            LogText,
		RequestSigning:       SigningAuto,
		BatchSize:            DefaultBatchSize,
		LeaseMargin:          DefaultLeaseMargin,
		DuplicateWindow:      DefaultDuplicateWindow,
		NewNodeCheckTimeout:  DefaultNewNodeCheckTimeout,
		NewNodesPerSweep:     DefaultNewNodesPerSweep,
		NewNodesRate:         DefaultNewNodesRate,
		NewNodesBurst:        DefaultNewNodesBurst,
		DiscoveryMaxNodes:    DefaultDiscoveryMaxNodes,
		BrokerConnectTimeout: DefaultBrokerConnectTimeout,
		StateDir:             DefaultStateDir,
	}
}

// Standalone reports whether the edge runs without a coordinator.
func (c *Config) Standalone() bool { return len(c.Coordinators) == 0 }

// SlogLevel maps loglevel, which takes logrus's names as choria-provisioner's did, to a slog level.
func (c *Config) SlogLevel() slog.Level {
	switch strings.ToLower(c.LogLevel) {
	case "trace", "debug":
		return slog.LevelDebug
	case "warn", "warning":
		return slog.LevelWarn
	case "error", "fatal", "panic":
		return slog.LevelError
	default:
		return slog.LevelInfo
	}
}
