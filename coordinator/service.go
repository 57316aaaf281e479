// SPDX-License-Identifier: Apache-2.0

package coordinator

import (
	"cmp"
	"context"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/seed96588659/muster/coordinator/edgecalls"
	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/coordinator/lessor"
	"github.com/seed96588659/muster/coordinator/metrics"
	"github.com/seed96588659/muster/coordinator/raftnode"
	"github.com/seed96588659/muster/pkg/api"
)

// Config describes one coordinator member.
type Config struct {
	// ID is the member's stable Raft server id.
	ID string
	// DataDir holds the Raft log, snapshots and the ledger (ledgerFile); it is made private.
	DataDir string
	// RaftBind is the Raft TCP listen address (127.0.0.1:0 in tests); RaftAdvertise the address
	// others dial, empty for the bound one.
	RaftBind      string
	RaftAdvertise string
	// APIAddress is this member's API base URL, replicated so any member can name the leader's.
	APIAddress string
	// Bootstrap starts a new one-member cluster when DataDir has no state.
	Bootstrap bool
	// Join says this member is to join an existing cluster (serve's join): with no Raft state it
	// has no vote until the leader promotes it (JoinRequest, Joined). With none of Join,
	// Bootstrap and BootstrapPeers, a member without Raft state refuses to start.
	Join bool
	// BootstrapPeers starts a new cluster of these voters (this member among them) when DataDir
	// has no state; give every initial member the same list. An alternative to Bootstrap + Join.
	BootstrapPeers []raftnode.Peer
	// Timeouts of Raft; zero values take raftnode.LoopbackTimeouts.
	Timeouts raftnode.Timeouts
	// Leases tunes the lease manager; zero fields take lessor.DefaultConfig, and Extension
	// defaults to the election timeout.
	Leases lessor.Config
	// Snapshot tuning; zero takes raft's defaults.
	SnapshotThreshold uint64
	SnapshotInterval  time.Duration
	TrailingLogs      uint64
	// LedgerNoSync and RaftNoSync skip fsync; see ledger/DESIGN.md before using either.
	LedgerNoSync bool
	RaftNoSync   bool
	// EventMemory is how many events the ledger's event log keeps (ledger.Options.EventMemory):
	// for tests only, and the same on every member.
	EventMemory int
	// RaftTLS runs the Raft transport over (mutual) TLS; see raftnode.Config.TLS.
	RaftTLS *tls.Config
	// Warnings are the configuration's (config.Config.Warnings), shown in Status.
	Warnings []string
	// RaftMemberName is the DNS name members' certificates carry over Raft TLS (raftnode.Config.MemberName).
	RaftMemberName string
	// RaftDial replaces the Raft dialer (tests insert a TCP proxy to partition members).
	RaftDial func(address string, timeout time.Duration) (net.Conn, error)
	// MemberClient is the HTTP client this member uses towards other members' APIs (the one that
	// forwards and joins, presenting this member's certificate) and AdminToken the bearer token it
	// sends: a leader reads each member's protocol from its status. Nil takes a plain client.
	MemberClient *http.Client
	AdminToken   string
	// RoundTripInterval is how often this member times a request to every other member
	// (roundtrip.go); zero takes 5s.
	RoundTripInterval time.Duration
	// MaxFirstSeen caps a region's first-seen nodes (waiting, never leased): the leader refuses
	// a register's new identities beyond it (register.max_first_seen); zero: no cap.
	MaxFirstSeen int
	// Approval is the hold policy (approval.*) this member stamps into registrations while it
	// leads; nil holds nothing.
	Approval *ledger.Approval
	// MaxEdges is how many edges' last heartbeats the leader keeps; zero takes DefaultMaxEdges.
	// EdgeExpiry is how long it keeps one not heard from; zero takes three lease TTLs.
	MaxEdges   int
	EdgeExpiry time.Duration
	// ProtocolInterval is how often a leader asks the members for their protocol while the
	// cluster protocol may still rise; zero takes 2s.
	ProtocolInterval time.Duration
	// AnnounceProtocol is the protocol this member says it applies, for tests of mixed clusters
	// only (no configuration key sets it); zero takes ledger.Protocol.
	AnnounceProtocol int
	// Clock, Logger and Registry are injected; nil takes the system clock, a discarding logger
	// and a private registry.
	Clock    Clock
	Logger   *slog.Logger
	Registry prometheus.Registerer
}

// raftConfig is the member's Raft node configuration.
func (c Config) raftConfig(log *slog.Logger) raftnode.Config {
	return raftnode.Config{
		ID:                c.ID,
		Dir:               c.DataDir,
		Bind:              c.RaftBind,
		Advertise:         c.RaftAdvertise,
		Bootstrap:         c.Bootstrap,
		BootstrapPeers:    c.BootstrapPeers,
		Join:              c.Join,
		Timeouts:          c.Timeouts,
		SnapshotThreshold: c.SnapshotThreshold,
		SnapshotInterval:  c.SnapshotInterval,
		TrailingLogs:      c.TrailingLogs,
		NoSync:            c.RaftNoSync,
		TLS:               c.RaftTLS,
		MemberName:        c.RaftMemberName,
		Dial:              c.RaftDial,
		Logger:            log,
		WrapLogs:          checkLogs(log),
	}
}

// maxEdges is MaxEdges or its default.
func (c Config) maxEdges() int {
	if c.MaxEdges > 0 {
		return c.MaxEdges
	}
	return DefaultMaxEdges
}

// edgeExpiry is EdgeExpiry, or three of the lease TTL the lease manager runs with.
func (c Config) edgeExpiry() time.Duration {
	if c.EdgeExpiry > 0 {
		return c.EdgeExpiry
	}
	return edgeTableTTLs * cmp.Or(max(c.Leases.TTL, 0), lessor.DefaultConfig().TTL)
}

// Service is one coordinator member: the core the HTTP layer calls. Every write goes through Raft
// on the leader; reads answer from this member's ledger.
type Service struct {
	cfg     Config
	log     *slog.Logger
	clock   Clock
	node    *raftnode.Node
	ledger  *ledger.Ledger
	dirLock *dataDirLock
	// printMu runs one ledger fingerprint at a time: each reads the whole ledger, and a reader's
	// credential must not make a member read it many times at once.
	printMu sync.Mutex
	leases  atomic.Pointer[lessor.Manager]
	metrics *metrics.Metrics

	edges *edgeTable
	// calls answers the edges' calls by the rules the simulator runs too.
	calls *edgecalls.Calls

	// protocolMu orders the leader's protocol raise (ask every member, then propose) with a join's
	// protocol check and configuration change, so no member joins between the two halves of a raise.
	protocolMu sync.Mutex

	// applied is closed at every applied batch, then replaced: it wakes the event readers.
	appliedMu sync.Mutex
	applied   chan struct{}

	closing   chan struct{}
	rtt       roundTrips
	wg        sync.WaitGroup
	closeOnce sync.Once
	ready     atomic.Bool
}

// New opens (or creates) the member's state and starts Raft and the leadership monitor.
func New(cfg Config) (*Service, error) {
	if cfg.Clock == nil {
		cfg.Clock = newSystemClock()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	if cfg.MemberClient == nil {
		cfg.MemberClient = &http.Client{}
	}
	if cfg.RoundTripInterval <= 0 {
		cfg.RoundTripInterval = defaultRoundTripInterval
	}
	if cfg.ProtocolInterval <= 0 {
		cfg.ProtocolInterval = defaultProtocolInterval
	}
	if cfg.RaftBind == "" {
		return nil, fmt.Errorf("coordinator %s: raft bind address is empty", cfg.ID)
	}
	if cfg.ID == "" {
		return nil, errors.New("coordinator: member id is empty")
	}
	s := &Service{cfg: cfg, log: cfg.Logger.With("member", cfg.ID), clock: cfg.Clock, closing: make(chan struct{}), applied: make(chan struct{})}
	s.calls = edgecalls.New(edgeMember{s}, edgecalls.Options{
		Errors: HTTPErrors(), MaxFirstSeen: cfg.MaxFirstSeen, Logger: s.log, Monotonic: cfg.Clock.Monotonic,
		Approval:         cfg.Approval,
		FirstSeenRefused: func(n int) { s.metrics.FirstSeenRefused.Add(float64(n)) },
	})

	if err := privateDataDir(cfg.DataDir); err != nil {
		return nil, fmt.Errorf("coordinator %s: %w", cfg.ID, err)
	}
	// First, before any file: a second process on a running member's directory is told so at once.
	lock, err := lockDataDir(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("coordinator %s: %w", cfg.ID, err)
	}
	l, err := openLedger(cfg.DataDir, ledger.Options{NoSync: cfg.LedgerNoSync, Logger: s.log, OnApply: s.onApply, EventMemory: cfg.EventMemory})
	if err != nil {
		_ = lock.Unlock()
		return nil, fmt.Errorf("coordinator %s: %w", cfg.ID, err)
	}
	node, err := raftnode.Open(cfg.raftConfig(s.log), traceFSM(l.FSM()))
	if err != nil {
		_ = l.Close()
		_ = lock.Unlock()
		return nil, fmt.Errorf("coordinator %s: %w", cfg.ID, err)
	}
	s.node, s.ledger, s.dirLock = node, l, lock

	s.metrics, err = metrics.New(cfg.Registry, cfg.ID, metrics.Sources{
		Leader:              node.IsLeader,
		Term:                node.Term,
		AppliedIndex:        func() uint64 { i, _, _ := s.ledger.AppliedIndex(); return i },
		LeasesActive:        func() int { n, _ := s.ledger.LeaseCount(); return n },
		DroppedObservations: node.DroppedObservations,
		Nodes:               s.ledger.Counts,
		ClusterProtocol:     func() int { v, _ := s.ledger.ClusterProtocol(); return v },
		LedgerCommits:       s.ledger.Commits,
		OldestHolds:         s.oldestHolds,
	})
	if err != nil {
		_ = s.closeStorage()
		return nil, fmt.Errorf("coordinator %s: %w", cfg.ID, err)
	}
	s.edges = newEdgeTable(s.clock, cfg.maxEdges(), cfg.edgeExpiry(), s.metrics.EdgesRefused, s.log)
	lc := cfg.Leases
	if lc.Extension <= 0 {
		lc.Extension = node.ElectionTimeout()
	}
	mgr, err := lessor.New(lc, s.ledger, s.propose, s.clock, s.metrics, s.log)
	if err != nil {
		_ = s.closeStorage()
		return nil, fmt.Errorf("coordinator %s: %w", cfg.ID, err)
	}
	s.leases.Store(mgr)

	s.wg.Add(2)
	go s.monitorLeadership()
	go s.probeRoundTrips()
	return s, nil
}

func (s *Service) onApply(a ledger.Applied) {
	if m := s.leases.Load(); m != nil {
		m.Notify(a)
	}
	s.noteApplied()
}

// propose replicates one command and measures how long the leader waited for its result.
func (s *Service) propose(ctx context.Context, cmd ledger.Command) (any, error) {
	data, err := ledger.EncodeCommand(cmd)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	res, _, err := s.node.Apply(ctx, data)
	s.metrics.ApplyLatency.WithLabelValues(ledger.CommandType(data[0]).String()).Observe(time.Since(start).Seconds())
	return res, err
}

// leaderOnly refuses a write on a member that does not lead or is not ready to.
func (s *Service) leaderOnly() error {
	select {
	case <-s.closing:
		return ErrClosed
	default:
	}
	if !s.node.IsLeader() {
		if _, id := s.node.Leader(); id == "" {
			return fmt.Errorf("member %s: %w", s.cfg.ID, ErrNoLeader)
		}
		return fmt.Errorf("member %s: %w", s.cfg.ID, ErrNotLeader)
	}
	if !s.ready.Load() {
		return fmt.Errorf("member %s: %w", s.cfg.ID, ErrNotReady)
	}
	return nil
}

// confirmLeadership checks with a quorum that this member still leads, so what it then reads
// from its own ledger is current: every pause acknowledged to an operator was applied here
// before its answer, and no other member can have committed anything since.
func (s *Service) confirmLeadership(ctx context.Context, what string) error {
	done := make(chan error, 1)
	go func() { done <- s.node.VerifyLeader() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("member %s: %s: %w", s.cfg.ID, what, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("member %s: %s: confirm leadership: %w (%v)", s.cfg.ID, what, ErrTimeout, ctx.Err())
	}
}

// mapLeaseErr turns the lease manager's "disabled" into the error a client can act on.
func (s *Service) mapLeaseErr(err error) error {
	if errors.Is(err, lessor.ErrDisabled) {
		if lerr := s.leaderOnly(); lerr != nil {
			return lerr
		}
		return fmt.Errorf("member %s: %w", s.cfg.ID, ErrNotReady)
	}
	return err
}

// stamp is this member's ledger time for a command it proposes now; a member whose leadership
// is not established has none and refuses (not leader, or not ready).
func (s *Service) stamp() (time.Time, error) {
	now, err := s.leases.Load().Stamp()
	if err != nil {
		return time.Time{}, s.mapLeaseErr(err)
	}
	return now, nil
}

// IsLeader reports whether this member leads and has established its leadership.
func (s *Service) IsLeader() bool { return s.node.IsLeader() && s.ready.Load() }

// Staleness is what this member can say of its own copy of the ledger when it answers a read
// without the leader: whether it knows a leader, since when it has not heard from one, and how
// far its copy goes. The age is measured against raft's own clock (the system's), not Clock.
// Fingerprint is this member's ledger digest (hex) at the index it has applied (httpapi.Service).
func (s *Service) Fingerprint() (applied uint64, digest string, err error) {
	s.printMu.Lock()
	defer s.printMu.Unlock()
	i, d, err := s.ledger.Fingerprint()
	if err != nil {
		return 0, "", fmt.Errorf("ledger fingerprint: %w", err)
	}
	return i, hex.EncodeToString(d), nil
}

func (s *Service) Staleness() api.Staleness {
	st := api.Staleness{Member: s.cfg.ID, LastContact: -1}
	_, leader := s.node.Leader()
	st.KnownLeader = leader != ""
	if s.node.IsLeader() {
		st.LastContact = 0
	} else if lc := s.node.LastContact(); !lc.IsZero() {
		st.LastContact = api.Duration(time.Since(lc))
	}
	if i, _, err := s.ledger.AppliedIndex(); err == nil {
		st.AppliedIndex = i
	}
	return st
}

// LeaderAPIAddress is the leader's API base URL from the replicated member table, "" when unknown.
func (s *Service) LeaderAPIAddress() string {
	_, id := s.node.Leader()
	if id == "" {
		return ""
	}
	if id == s.cfg.ID {
		return s.cfg.APIAddress
	}
	m, err := s.ledger.Members()
	if err != nil {
		return ""
	}
	return m[id]
}

// ID is this member's id.
func (s *Service) ID() string { return s.cfg.ID }

// oldestHolds is how long each region's longest-held node has waited, on this member's clock
// against the ledger's hold times (the leader's): the held-too-long alert's gauge.
func (s *Service) oldestHolds() (map[string]time.Duration, error) {
	since, err := s.ledger.OldestHolds()
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	out := make(map[string]time.Duration, len(since))
	for region, at := range since {
		out[region] = max(now.Sub(at), 0)
	}
	return out, nil
}

// RaftAddress is the address other members dial (use it to Join this member).
func (s *Service) RaftAddress() string { return s.node.Addr() }

// BoundRaftAddress is the address the Raft transport listens on (differs from RaftAddress when
// an advertise address is configured).
func (s *Service) BoundRaftAddress() string { return s.node.BoundAddr() }

// Ledger exposes this member's ledger for read-only inspection (tests, tools).
func (s *Service) Ledger() *ledger.Ledger { return s.ledger }

// Leases exposes the lease manager (tests drive ExpireDue directly).
func (s *Service) Leases() *lessor.Manager { return s.leases.Load() }

// Close stops the member; its files stay for a restart.
func (s *Service) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.closing)
		s.wg.Wait()
		err = s.closeStorage()
	})
	return err
}

// closeStorage stops Raft, then closes the ledger it applied to, then frees the data directory.
func (s *Service) closeStorage() error {
	return errors.Join(s.node.Shutdown(), s.ledger.Close(), s.dirLock.Unlock())
}
