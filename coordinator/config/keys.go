// SPDX-License-Identifier: Apache-2.0

package config

import (
	"time"

	"github.com/seed96588659/muster/pkg/settings"
)

// Keys of the coordinator's configuration. The YAML file nests on the dots; the environment
// variable is MUSTER_ and the upper-cased key with dots as underscores; the flag is the key with
// dots and underscores as dashes.
const (
	KeyNodeID              = "node_id"
	KeyDataDir             = "data_dir"
	KeyBootstrap           = "bootstrap"
	KeyBootstrapExpect     = "bootstrap_expect"
	KeyJoin                = "join"
	KeyRaftBind            = "raft.bind"
	KeyRaftAdvertise       = "raft.advertise"
	KeyRaftTLS             = "raft.tls"
	KeyRaftHeartbeat       = "raft.heartbeat_timeout"
	KeyRaftElection        = "raft.election_timeout"
	KeyRaftLeaderLease     = "raft.leader_lease_timeout"
	KeyRaftCommit          = "raft.commit_timeout"
	KeyRaftRoundTrip       = "raft.round_trip"
	KeyRaftSnapThreshold   = "raft.snapshot_threshold"
	KeyRaftSnapInterval    = "raft.snapshot_interval"
	KeyHTTPBind            = "http.bind"
	KeyHTTPAdvertise       = "http.advertise"
	KeyHTTPMaxBody         = "http.max_body_bytes"
	KeyHTTPRedirect        = "http.redirect"
	KeyHTTPProfiling       = "http.profiling"
	KeyHTTPEventReaders    = "http.max_event_readers"
	KeyHTTPEventWrite      = "http.event_write_timeout"
	KeyEdgeTokens          = "auth.edge_tokens"
	KeyEdges               = "auth.edges"
	KeyAdminToken          = "auth.admin_token"
	KeyAdmins              = "auth.admins"
	KeyClientCerts         = "auth.client_certs"
	KeyInsecure            = "auth.insecure"
	KeyReaders             = "auth.readers"
	KeyTLSCert             = "tls.cert"
	KeyTLSKey              = "tls.key"
	KeyTLSCA               = "tls.ca"
	KeyTLSMemberName       = "tls.member_name"
	KeyLeaseTTL            = "lease.ttl"
	KeyLeaseGrace          = "lease.grace"
	KeyMaxClockDrift       = "lease.max_clock_drift"
	KeyLockWindow          = "lease.lock_window"
	KeyMaxAttempts         = "lease.max_attempts"
	KeyRetryBackoff        = "lease.retry_backoff"
	KeyRetryBackoffMax     = "lease.retry_backoff_max"
	KeyReprovisionAfter    = "lease.reprovision_after"
	KeyMaxWait             = "lease.max_wait"
	KeyLeaseMaxNodes       = "lease.max_nodes"
	KeyHistoryLength       = "ledger.history_length"
	KeyMaxFirstSeen        = "register.max_first_seen"
	KeyApprovalManual      = "approval.manual"
	KeyApprovalReprovision = "approval.reprovision"
	KeyApprovalFlapping    = "approval.flapping"
	KeyLogLevel            = "log.level"
	KeyLogFormat           = "log.format"
)

// schema lists every setting with its default, each with a flag named after it; an unknown key
// in the file is refused.
func schema() *settings.Schema {
	keys := []settings.Key{
		{Name: KeyNodeID, Kind: settings.String, Default: "", Usage: "this member's Raft server id (unique in the cluster)"},
		{Name: KeyDataDir, Kind: settings.String, Default: "", Usage: "directory of the Raft log, snapshots and the ledger file"},
		{Name: KeyBootstrap, Kind: settings.Bool, Default: false, Usage: "bootstrap a new single-member cluster on first start"},
		{Name: KeyBootstrapExpect, Kind: settings.Int, Default: 0, Usage: "bootstrap a new cluster of this many voters once every one of them (join names the others) answers without Raft state; a member that finds a cluster joins it instead; 0: off"},
		{Name: KeyJoin, Kind: settings.List, Default: []string{}, Usage: "API addresses of existing members to join through (needs the admin token)"},
		{Name: KeyRaftBind, Kind: settings.String, Default: "127.0.0.1:7000", Usage: "host:port the Raft transport listens on"},
		{Name: KeyRaftAdvertise, Kind: settings.String, Default: "", Usage: "host:port other members reach the Raft transport at (default: raft.bind)"},
		{Name: KeyRaftTLS, Kind: settings.Bool, Default: false, Usage: "run the Raft transport over TLS with tls.cert/key/ca"},
		{Name: KeyRaftHeartbeat, Kind: settings.Duration, Default: 500 * time.Millisecond, Usage: "Raft heartbeat timeout"},
		{Name: KeyRaftElection, Kind: settings.Duration, Default: 500 * time.Millisecond, Usage: "Raft election timeout"},
		{Name: KeyRaftLeaderLease, Kind: settings.Duration, Default: 250 * time.Millisecond, Usage: "Raft leader lease timeout"},
		{Name: KeyRaftCommit, Kind: settings.Duration, Default: 10 * time.Millisecond, Usage: "Raft commit timeout"},
		{Name: KeyRaftRoundTrip, Kind: settings.Duration, Default: time.Duration(0), Usage: "the longest round trip between two members (e.g. 80ms across datacenters); heartbeat and election timeouts under 5 of it are refused; 0: judged only against the round trips members measure (status)"},
		{Name: KeyRaftSnapThreshold, Kind: settings.Int, Default: 8192, Usage: "Raft log entries between snapshots"},
		{Name: KeyRaftSnapInterval, Kind: settings.Duration, Default: 2 * time.Minute, Usage: "how often Raft checks whether to snapshot"},
		{Name: KeyHTTPBind, Kind: settings.String, Default: "127.0.0.1:8000", Usage: "host:port the edge and admin API listens on"},
		{Name: KeyHTTPAdvertise, Kind: settings.String, Default: "", Usage: "API base URL other members and edges reach this member at (default: from http.bind)"},
		{Name: KeyHTTPMaxBody, Kind: settings.Int, Default: 1 << 20, Usage: "largest request body accepted, in bytes"},
		{Name: KeyHTTPRedirect, Kind: settings.Bool, Default: false, Usage: "answer followers' requests with the leader's address instead of forwarding them"},
		{Name: KeyHTTPProfiling, Kind: settings.Bool, Default: false, Usage: "serve this member's CPU and heap profiles to admins of role admin (/v1/admin/profile/cpu and /heap)"},
		{Name: KeyHTTPEventReaders, Kind: settings.Int, Default: 256, Usage: "event streams (GET /v1/events, events --follow) this member serves at once; one more is refused with 503"},
		{Name: KeyHTTPEventWrite, Kind: settings.Duration, Default: 10 * time.Second, Usage: "how long one write to an event stream may wait for its reader before the stream is cut"},
		{Name: KeyEdgeTokens, Kind: settings.List, Default: []string{}, Usage: "unbound bearer tokens that open the edge API for any edge name (prefer auth.edges)"},
		{Name: KeyEdges, Kind: settings.List, Default: []string{}, Usage: "edge credentials, each EDGE@REGION[+REGION...]=TOKEN (a bearer token) or EDGE@REGION[+REGION...] (the client certificate whose common name is EDGE); each may act only as EDGE in those regions"},
		{Name: KeyAdminToken, Kind: settings.String, Default: "", Usage: "bearer token that opens the admin API (prefer the file or MUSTER_AUTH_ADMIN_TOKEN)"},
		{Name: KeyAdmins, Kind: settings.List, Default: []string{}, Usage: "named admin credentials, each NAME:ROLE=TOKEN (a bearer token) or NAME:ROLE (the client certificate whose common name is NAME, verified against tls.ca); ROLE is read (the admin reads), operate (adds pause, resume, retry and the verbs on nodes) or admin (everything); the audit and each node's history name NAME. auth.admin_token is one more, named admin, with role admin"},
		{Name: KeyClientCerts, Kind: settings.Bool, Default: false, Usage: "accept edge requests with a TLS client certificate signed by tls.ca, each acting as the edge auth.edges binds its common name to (EDGE@REGION); once any edge is bound, a certificate bound to none acts as no edge. Not needed for the status page (auth.readers)"},
		{Name: KeyReaders, Kind: settings.List, Default: []string{}, Usage: "common names of client certificates (the status page's) that may use the admin reads without a token (admins of role read); with none, only tokens open them"},
		{Name: KeyInsecure, Kind: settings.Bool, Default: false, Usage: "open the edge API without any credential (local experiments only)"},
		{Name: KeyTLSCert, Kind: settings.String, Default: "", Usage: "PEM certificate of this member (enables HTTPS)"},
		{Name: KeyTLSKey, Kind: settings.String, Default: "", Usage: "PEM private key of tls.cert"},
		{Name: KeyTLSCA, Kind: settings.String, Default: "", Usage: "PEM CA that client certificates and other members must chain to"},
		{Name: KeyTLSMemberName, Kind: settings.String, Default: "member.muster", Usage: "DNS name (subject alternative name) every member's certificate carries: the Raft port and member forwards require it, so an edge's or the status page's certificate of the same CA is refused there"},
		{Name: KeyLeaseTTL, Kind: settings.Duration, Default: 30 * time.Second, Usage: "lifetime of a lease between renewals"},
		{Name: KeyLeaseGrace, Kind: settings.Duration, Default: 5 * time.Second, Usage: "time after expiry before a node is offered again (>= lease.max_clock_drift)"},
		{Name: KeyMaxClockDrift, Kind: settings.Duration, Default: time.Second, Usage: "most two monotonic clocks may drift apart over one lease (see coordinator/lessor/DESIGN.md)"},
		{Name: KeyLockWindow, Kind: settings.Duration, Default: 2 * time.Minute, Usage: "go-choria's provisioning lock: a node is not offered to another edge sooner"},
		{Name: KeyMaxAttempts, Kind: settings.Int, Default: 5, Usage: "attempts before a node is abandoned"},
		{Name: KeyRetryBackoff, Kind: settings.Duration, Default: 5 * time.Second, Usage: "first delay before a failed node is offered again (doubles per attempt)"},
		{Name: KeyRetryBackoffMax, Kind: settings.Duration, Default: 5 * time.Minute, Usage: "longest delay before a failed node is offered again"},
		{Name: KeyReprovisionAfter, Kind: settings.Duration, Default: 30 * time.Second, Usage: "a provisioned node seen again in provisioning mode is re-queued only this long after it finished"},
		{Name: KeyMaxWait, Kind: settings.Duration, Default: 10 * time.Second, Usage: "longest long poll of an acquire (at most a third of lease.ttl)"},
		{Name: KeyLeaseMaxNodes, Kind: settings.Int, Default: 1000, Usage: "most nodes in one lease"},
		{Name: KeyHistoryLength, Kind: settings.Int, Default: 20, Usage: "transitions kept in each node's history"},
		{Name: KeyMaxFirstSeen, Kind: settings.Int, Default: DefaultMaxFirstSeen, Usage: "most first-seen nodes (waiting, never leased) one region holds: the leader refuses a register's new identities beyond it, naming region and cap (anyone with the provisioning.jwt can answer a discovery for invented identities); at least the region's largest boot storm; 0: no cap"},
		{Name: KeyApprovalManual, Kind: settings.List, Default: []string{}, Usage: "regions (or * for all) whose first-seen nodes are held until an operator approves them (docs/approvals.md); decided by the leader, from cluster protocol 8"},
		{Name: KeyApprovalReprovision, Kind: settings.String, Default: ReprovisionAuto, Usage: "auto: a provisioned node back in provisioning mode is provisioned again; hold: it is held until approved (a rebuild, a clone or an impostor)"},
		{Name: KeyApprovalFlapping, Kind: settings.String, Default: "off", Usage: "N/DURATION (e.g. 3/1h): a node that re-enters provisioning mode N times within DURATION is held as flapping; off: never"},
		{Name: KeyLogLevel, Kind: settings.String, Default: "info", Usage: "log level: debug, info, warn or error"},
		{Name: KeyLogFormat, Kind: settings.String, Default: "text", Usage: "log format: text or json"},
	}
	for i := range keys {
		keys[i].Flag = settings.FlagName(keys[i].Name)
	}
	return &settings.Schema{
		EnvPrefix: EnvPrefix, Keys: keys,
		DurationExamples: "30s, 500ms, 2m",
		// Items never hold a space: join and auth.edges read as well space-separated.
		ListSeparators: ", \t\n",
		// node_id: 1 is a name, and a token may be all digits.
		ScalarText: true,
	}
}

// EnvName is the environment variable of a key.
func EnvName(k string) string { return settings.EnvName(EnvPrefix, k) }

// EnvPrefix starts every environment variable of the coordinator.
const EnvPrefix = "MUSTER"
