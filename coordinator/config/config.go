// SPDX-License-Identifier: Apache-2.0

package config

import (
	"fmt"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// Config is a coordinator member's checked configuration.
type Config struct {
	NodeID    string
	DataDir   string
	Bootstrap bool
	// BootstrapExpect is the number of voters a new cluster starts with (0: off); see bootstrap_expect.
	BootstrapExpect int
	Join            []string
	Raft            Raft
	HTTP            HTTP
	Auth            Auth
	TLS             TLS
	Lease           Lease
	Ledger          Ledger
	Approval        Approval
	Log             Log
	// Warnings name what is allowed but exposes the cluster, or is ignored (warnings.go); the
	// member logs them at start and shows them in status.
	Warnings []string
}

// Raft configures the consensus transport and timing.
type Raft struct {
	Bind               string
	Advertise          string
	TLS                bool
	HeartbeatTimeout   time.Duration
	ElectionTimeout    time.Duration
	LeaderLeaseTimeout time.Duration
	CommitTimeout      time.Duration
	// RoundTrip is the longest round trip between two members the operator expects; 0 unknown.
	RoundTrip         time.Duration
	SnapshotThreshold uint64
	SnapshotInterval  time.Duration
}

// HTTP configures the edge and admin API listener.
type HTTP struct {
	Bind         string
	Advertise    string
	MaxBodyBytes int64
	Redirect     bool
	Profiling    bool
	// MaxEventReaders and EventWriteTimeout bound the event streams (httpapi.Config).
	MaxEventReaders   int
	EventWriteTimeout time.Duration
}

// Auth holds the API credentials; String never shows them.
type Auth struct {
	EdgeTokens []string
	Edges      []Edge
	AdminToken string
	// Admins are the named admin credentials of auth.admins.
	Admins      []Admin
	ClientCerts bool
	Insecure    bool
	// Readers are the client certificates' common names that open the admin reads.
	Readers []string
}

// Edge is one edge credential of auth.edges: a bearer token, or (Token empty) the client
// certificate whose common name is Name, bound to the edge Name acting in Regions.
type Edge struct {
	Name    string
	Regions []string
	Token   string
}

// String names the edge and its regions, never the token.
func (e Edge) String() string { return fmt.Sprintf("%s@%v", e.Name, e.Regions) }

// Admin is one named admin credential of auth.admins: a bearer token, or (Token empty) the
// client certificate whose common name is Name, with what Role allows.
type Admin struct {
	Name  string
	Role  api.Role
	Token string
}

// String names the admin and its role, never the token.
func (a Admin) String() string { return a.Name + ":" + string(a.Role) }

// TLS names the PEM files of this member.
type TLS struct {
	Cert string
	Key  string
	CA   string
	// MemberName is the DNS name members' certificates carry (their role in the cluster).
	MemberName string
}

// Enabled reports whether the API (and optionally Raft) serve TLS.
func (t TLS) Enabled() bool { return t.Cert != "" }

// Lease configures lease lifetimes and the retry policy of nodes.
type Lease struct {
	TTL              time.Duration
	Grace            time.Duration
	MaxClockDrift    time.Duration
	LockWindow       time.Duration
	MaxAttempts      int
	RetryBackoff     time.Duration
	RetryBackoffMax  time.Duration
	ReprovisionAfter time.Duration
	MaxWait          time.Duration
	MaxNodes         int
}

// Ledger configures what the ledger keeps.
type Ledger struct {
	HistoryLength int
	// MaxFirstSeen caps each region's first-seen nodes (waiting, never leased); 0 is no cap
	// (register.max_first_seen).
	MaxFirstSeen int
}

// DefaultMaxFirstSeen is register.max_first_seen's default: a region's boot storm of 10,000
// nodes registers at once, and invented identities stop there.
const DefaultMaxFirstSeen = 10_000

// Log configures the process logger.
type Log struct {
	Level  string
	Format string
}
