// SPDX-License-Identifier: Apache-2.0

package raftnode

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/hashicorp/raft"
)

// Config describes one member.
type Config struct {
	// ID is the member's stable Raft server id.
	ID string
	// Dir holds raft.db (log and stable store) and snapshots/.
	Dir string
	// Bind is the TCP address the transport listens on, e.g. 127.0.0.1:0.
	Bind string
	// Advertise is the address other members dial; empty means the bound address.
	Advertise string
	// Bootstrap makes this member a one-member cluster if it has no state yet.
	Bootstrap bool
	// BootstrapPeers, when set and the member has no state yet, bootstraps the cluster with all of
	// them as voters (this member included); every initial member is given the same list.
	BootstrapPeers []Peer
	// Join says the member is to join an existing cluster (serve's join): with no Raft state it
	// starts behind the vote gate (votegate.go) and waits to be promoted. A member with no state,
	// no bootstrap and no Join refuses to start.
	Join bool
	// Timeouts tune failure detection; zero values take Defaults.
	Timeouts Timeouts
	// SnapshotThreshold and SnapshotInterval control automatic snapshots; zero takes raft's.
	SnapshotThreshold uint64
	SnapshotInterval  time.Duration
	// TrailingLogs is how many entries stay in the log after a snapshot; zero takes raft's.
	TrailingLogs uint64
	// NoSync skips fsync of the Raft log; only for benchmarks that measure something else.
	NoSync bool
	// WrapLogs, when set, wraps the log store raft reads and writes (a failpoints build checks
	// that no entry changes in memory after it was stored).
	WrapLogs func(raft.LogStore) raft.LogStore
	// TLS, when set, runs the Raft transport over TLS: it is the server config of the listener and,
	// cloned with the peer's host as ServerName, the client config of outgoing connections. Set
	// Certificates, RootCAs, ClientCAs and ClientAuth=tls.RequireAndVerifyClientCert for mutual TLS.
	TLS *tls.Config
	// MemberName is the DNS name both ends' certificates must carry over TLS; empty takes
	// DefaultMemberName.
	MemberName string
	// Dial, when set, replaces net.DialTimeout for outgoing Raft connections (a test inserts a
	// TCP proxy here to partition the member).
	Dial func(address string, timeout time.Duration) (net.Conn, error)
	// Logger receives raft's log lines at RaftLogLevel and above.
	Logger       *slog.Logger
	RaftLogLevel slog.Level
}

// Timeouts are raft's failure-detection settings.
type Timeouts struct {
	Heartbeat   time.Duration
	Election    time.Duration
	LeaderLease time.Duration
	Commit      time.Duration
}

// MinRoundTrips is how many of the longest round trip between members the heartbeat and
// election timeouts must span: a follower that misses a few heartbeats in transit, or a vote
// that takes most of a timeout to come back, starts elections that flap. The configuration
// refuses timeouts under it for raft.round_trip; a member warns in status by it against the
// round trips it measures.
const MinRoundTrips = 5

// LoopbackTimeouts suit members on one host or a LAN: a lost leader is replaced in about a second
// while a loaded 2-core machine does not flap.
func LoopbackTimeouts() Timeouts {
	return Timeouts{Heartbeat: 500 * time.Millisecond, Election: 500 * time.Millisecond, LeaderLease: 500 * time.Millisecond, Commit: 10 * time.Millisecond}
}

// WANTimeouts are raft's own defaults, for members in different datacenters.
func WANTimeouts() Timeouts {
	d := raft.DefaultConfig()
	return Timeouts{Heartbeat: d.HeartbeatTimeout, Election: d.ElectionTimeout, LeaderLease: d.LeaderLeaseTimeout, Commit: d.CommitTimeout}
}

func (t Timeouts) withDefaults() Timeouts {
	d := LoopbackTimeouts()
	if t.Heartbeat == 0 {
		t.Heartbeat = d.Heartbeat
	}
	if t.Election == 0 {
		t.Election = d.Election
	}
	if t.LeaderLease == 0 {
		t.LeaderLease = min(d.LeaderLease, t.Heartbeat)
	}
	if t.Commit == 0 {
		t.Commit = d.Commit
	}
	return t
}

func (c Config) raftConfig() (*raft.Config, error) {
	if c.ID == "" {
		return nil, fmt.Errorf("raft config: member id is empty")
	}
	if c.Dir == "" {
		return nil, fmt.Errorf("raft config %s: data dir is empty", c.ID)
	}
	t := c.Timeouts.withDefaults()
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(c.ID)
	rc.HeartbeatTimeout = t.Heartbeat
	rc.ElectionTimeout = t.Election
	rc.LeaderLeaseTimeout = t.LeaderLease
	rc.CommitTimeout = t.Commit
	// The FSM is durable itself: it says which index it holds, and raftnode restores a newer
	// snapshot into it before raft starts (catchUpFromSnapshot), so raft need not restore on start.
	rc.NoSnapshotRestoreOnStart = true
	// BatchApplyCh stays off: with a buffered apply channel a future enqueued just before the
	// leader shuts down is never answered. The leader loop groups pending applies anyway.
	rc.MaxAppendEntries = 256
	if c.SnapshotThreshold > 0 {
		rc.SnapshotThreshold = c.SnapshotThreshold
	}
	if c.SnapshotInterval > 0 {
		rc.SnapshotInterval = c.SnapshotInterval
	}
	if c.TrailingLogs > 0 {
		rc.TrailingLogs = c.TrailingLogs
	}
	if err := raft.ValidateConfig(rc); err != nil {
		return nil, fmt.Errorf("raft config %s: %w", c.ID, err)
	}
	return rc, nil
}
