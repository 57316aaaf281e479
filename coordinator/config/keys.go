// SPDX-License-Identifier: Apache-2.0

package config

import (
	"strings"
	"time"
)

// kind says how a key's value is parsed and which flag type carries it.
type kind int

const (
	kString kind = iota
	kBool
	kInt
	kDuration
	kList
)

// key is one configuration setting: its dotted name, default, flag and help.
type key struct {
	name  string
	kind  kind
	def   any
	usage string
}

// Keys of the coordinator's configuration. The YAML file nests on the dots; the environment
// variable is MUSTER_ and the upper-cased key with dots as underscores; the flag is the key with
// dots and underscores as dashes.
const (
	KeyNodeID            = "node_id"
	KeyDataDir           = "data_dir"
	KeyBootstrap         = "bootstrap"
	KeyJoin              = "join"
	KeyRaftBind          = "raft.bind"
	KeyRaftAdvertise     = "raft.advertise"
	KeyRaftTLS           = "raft.tls"
	KeyRaftHeartbeat     = "raft.heartbeat_timeout"
	KeyRaftElection      = "raft.election_timeout"
	KeyRaftLeaderLease   = "raft.leader_lease_timeout"
	KeyRaftCommit        = "raft.commit_timeout"
	KeyRaftSnapThreshold = "raft.snapshot_threshold"
	KeyRaftSnapInterval  = "raft.snapshot_interval"
	KeyHTTPBind          = "http.bind"
	KeyHTTPAdvertise     = "http.advertise"
	KeyHTTPMaxBody       = "http.max_body_bytes"
	KeyHTTPRedirect      = "http.redirect"
	KeyEdgeTokens        = "auth.edge_tokens"
	KeyEdges             = "auth.edges"
	KeyAdminToken        = "auth.admin_token"
	KeyClientCerts       = "auth.client_certs"
	KeyInsecure          = "auth.insecure"
	KeyReaders           = "auth.readers"
	KeyTLSCert           = "tls.cert"
	KeyTLSKey            = "tls.key"
	KeyTLSCA             = "tls.ca"
	KeyTLSMemberName     = "tls.member_name"
	KeyLeaseTTL          = "lease.ttl"
	KeyLeaseGrace        = "lease.grace"
	KeyMaxClockDrift     = "lease.max_clock_drift"
	KeyLockWindow        = "lease.lock_window"
	KeyMaxAttempts       = "lease.max_attempts"
	KeyRetryBackoff      = "lease.retry_backoff"
	KeyRetryBackoffMax   = "lease.retry_backoff_max"
	KeyReprovisionAfter  = "lease.reprovision_after"
	KeyMaxWait           = "lease.max_wait"
	KeyLeaseMaxNodes     = "lease.max_nodes"
	KeyHistoryLength     = "ledger.history_length"
	KeyLogLevel          = "log.level"
	KeyLogFormat         = "log.format"
)

// allKeys lists every setting with its default; an unknown key in the file is refused.
func allKeys() []key {
	return []key{
		{KeyNodeID, kString, "", "this member's Raft server id (unique in the cluster)"},
		{KeyDataDir, kString, "", "directory of the Raft log, snapshots and the ledger file"},
		{KeyBootstrap, kBool, false, "bootstrap a new single-member cluster on first start"},
		{KeyJoin, kList, []string{}, "API addresses of existing members to join through (needs the admin token)"},
		{KeyRaftBind, kString, "127.0.0.1:7000", "host:port the Raft transport listens on"},
		{KeyRaftAdvertise, kString, "", "host:port other members reach the Raft transport at (default: raft.bind)"},
		{KeyRaftTLS, kBool, false, "run the Raft transport over TLS with tls.cert/key/ca"},
		{KeyRaftHeartbeat, kDuration, 500 * time.Millisecond, "Raft heartbeat timeout"},
		{KeyRaftElection, kDuration, 500 * time.Millisecond, "Raft election timeout"},
		{KeyRaftLeaderLease, kDuration, 250 * time.Millisecond, "Raft leader lease timeout"},
		{KeyRaftCommit, kDuration, 10 * time.Millisecond, "Raft commit timeout"},
		{KeyRaftSnapThreshold, kInt, 8192, "Raft log entries between snapshots"},
		{KeyRaftSnapInterval, kDuration, 2 * time.Minute, "how often Raft checks whether to snapshot"},
		{KeyHTTPBind, kString, "127.0.0.1:8000", "host:port the edge and admin API listens on"},
		{KeyHTTPAdvertise, kString, "", "API base URL other members and edges reach this member at (default: from http.bind)"},
		{KeyHTTPMaxBody, kInt, 1 << 20, "largest request body accepted, in bytes"},
		{KeyHTTPRedirect, kBool, false, "answer followers' requests with the leader's address instead of forwarding them"},
		{KeyEdgeTokens, kList, []string{}, "unbound bearer tokens that open the edge API for any edge name (prefer auth.edges)"},
		{KeyEdges, kList, []string{}, "edge credentials, each EDGE@REGION[+REGION...]=TOKEN (a bearer token) or EDGE@REGION[+REGION...] (the client certificate whose common name is EDGE); each may act only as EDGE in those regions"},
		{KeyAdminToken, kString, "", "bearer token that opens the admin API (prefer the file or MUSTER_AUTH_ADMIN_TOKEN)"},
		{KeyClientCerts, kBool, false, "accept edge requests with a TLS client certificate signed by tls.ca"},
		{KeyReaders, kList, []string{}, "common names of client certificates (the status page's) that may use the admin reads without the admin token; with none, only the token opens them"},
		{KeyInsecure, kBool, false, "open the edge API without any credential (local experiments only)"},
		{KeyTLSCert, kString, "", "PEM certificate of this member (enables HTTPS)"},
		{KeyTLSKey, kString, "", "PEM private key of tls.cert"},
		{KeyTLSCA, kString, "", "PEM CA that client certificates and other members must chain to"},
		{KeyTLSMemberName, kString, "member.muster", "DNS name (subject alternative name) every member's certificate carries: the Raft port and member forwards require it, so an edge's or the status page's certificate of the same CA is refused there"},
		{KeyLeaseTTL, kDuration, 30 * time.Second, "lifetime of a lease between renewals"},
		{KeyLeaseGrace, kDuration, 5 * time.Second, "time after expiry before a node is offered again (>= lease.max_clock_drift)"},
		{KeyMaxClockDrift, kDuration, time.Second, "most two monotonic clocks may drift apart over one lease (see coordinator/lease/DESIGN.md)"},
		{KeyLockWindow, kDuration, 2 * time.Minute, "go-choria's provisioning lock: a node is not offered to another edge sooner"},
		{KeyMaxAttempts, kInt, 5, "attempts before a node is abandoned"},
		{KeyRetryBackoff, kDuration, 5 * time.Second, "first delay before a failed node is offered again (doubles per attempt)"},
		{KeyRetryBackoffMax, kDuration, 5 * time.Minute, "longest delay before a failed node is offered again"},
		{KeyReprovisionAfter, kDuration, 30 * time.Second, "a provisioned node seen again in provisioning mode is re-queued only this long after it finished"},
		{KeyMaxWait, kDuration, 10 * time.Second, "longest long poll of an acquire (at most a third of lease.ttl)"},
		{KeyLeaseMaxNodes, kInt, 1000, "most nodes in one lease"},
		{KeyHistoryLength, kInt, 20, "transitions kept in each node's history"},
		{KeyLogLevel, kString, "info", "log level: debug, info, warn or error"},
		{KeyLogFormat, kString, "text", "log format: text or json"},
	}
}

// flagName is the command-line flag of a key.
func flagName(k string) string {
	return strings.NewReplacer(".", "-", "_", "-").Replace(k)
}

// EnvName is the environment variable of a key.
func EnvName(k string) string {
	return EnvPrefix + "_" + strings.ToUpper(strings.ReplaceAll(k, ".", "_"))
}

// EnvPrefix starts every environment variable of the coordinator.
const EnvPrefix = "MUSTER"
