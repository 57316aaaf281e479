// SPDX-License-Identifier: Apache-2.0

// Package testcluster runs real coordinator members inside a test: coordinator.New with Raft
// over TCP on 127.0.0.1 and bbolt in t.TempDir, optionally each member's HTTP API on loopback
// and proxies between the members that a test cuts and heals.
package testcluster

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/httpapi"
	"github.com/seed96588659/muster/coordinator/internal/testutil"
	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/coordinator/lessor"
	"github.com/seed96588659/muster/coordinator/raftnode"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/pkg/testkit/proxy"
)

// WaitLimit is how long the harness and its tests wait for a condition: generous, for a loaded machine.
const WaitLimit = 30 * time.Second

// The tokens of the members' APIs unless WithAPI's edit sets others; AdminToken is also the
// token a leader reads the other members' protocol with.
const (
	AdminToken = "test-admin-token"
	EdgeToken  = "test-edge-token"
)

// Cluster is n coordinator members of one test. Its exported fields shape how Start starts a
// member: set them after New, before the members they concern start.
type Cluster struct {
	t testing.TB
	// mu guards each member's Svc, which edges in other goroutines read.
	mu sync.Mutex
	// Members are c1..cn, in order.
	Members []*Member
	// Clock is the time the members stamp (tests move it, so lease expiry is decided by the
	// test); nil gives them the system clock.
	Clock *testutil.Clock
	// clocks holds the members that have a clock of their own; the others share Clock.
	clocks map[string]*testutil.Clock
	// Net carries Raft between the members when the cluster was made WithNetem, else nil.
	Net *Netem
	// Leases is every member's lease configuration (LeaseConfig unless changed).
	Leases lessor.Config
	// Timeouts are Raft's (raftnode.LoopbackTimeouts unless changed; see StableTimeouts).
	Timeouts raftnode.Timeouts
	// RaftTLS, when set, gives each member its Raft TLS config.
	RaftTLS func(id string) *tls.Config
	// LedgerNoSync and RaftNoSync are for benchmarks only.
	LedgerNoSync, RaftNoSync bool
	// Announce is the protocol a member says it applies (a member of an older build); absent
	// takes the newest.
	Announce map[string]int
	// Logs, when set, receives every member's log lines from LogLevel up.
	Logs     *testkit.LogBuffer
	LogLevel slog.Level
	// ProtocolInterval is how often a leader asks the members for their protocol (50ms if 0).
	ProtocolInterval time.Duration
	// MemberClient, when set, is every member's HTTP client towards the others' APIs (a test
	// slows or inspects what a leader asks); nil takes a plain client.
	MemberClient *http.Client
	// EditConfig, when set, changes each member's configuration before it starts (snapshot
	// tuning, the ledger's event memory, probe intervals).
	EditConfig func(*coordinator.Config)
	// netem is set by WithNetem.
	netem bool
	// serveAPI is set by WithAPI; editAPI then changes every member's HTTP configuration.
	serveAPI bool
	editAPI  func(*httpapi.Config)
}

// Member is one coordinator of a Cluster, running or stopped.
type Member struct {
	c   *Cluster
	ID  string
	Dir string
	// Front is the member's advertised Raft address for the whole test: a proxy to whatever
	// port the member bound last, so a restart never depends on getting its old port back.
	Front *proxy.Proxy
	// Svc is the running service, nil while stopped (other goroutines read it with Service).
	Svc *coordinator.Service
	// Reg is the registry of the member's current run.
	Reg *prometheus.Registry
	// URL is the API address the member records: its API's, or an unreachable name.
	URL string
	// API serves the member's real HTTP API when the cluster was made WithAPI, else nil.
	API *httptest.Server
	// handler is what API serves: the API of the running service, nil while stopped.
	handler atomic.Pointer[httpapi.Server]
}

// Option changes how New builds a cluster.
type Option func(*Cluster)

// WithNetem puts a proxy on every link between two members (Cluster.Net), to partition and heal.
func WithNetem() Option { return func(c *Cluster) { c.netem = true } }

// WithAPI serves each member's real HTTP API on loopback for the whole test (Member.URL);
// edit, when not nil, changes each member's HTTP configuration.
func WithAPI(edit func(*httpapi.Config)) Option {
	return func(c *Cluster) { c.serveAPI, c.editAPI = true, edit }
}

// NewClock is a test clock standing at a fixed time, alone in its world.
func NewClock() *testutil.Clock {
	return testutil.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
}

// LeaseConfig is the lease configuration of a Cluster unless a test changes it: a short expiry
// loop and a small retry policy.
func LeaseConfig() lessor.Config {
	return lessor.Config{
		TTL: 30 * time.Second, Grace: 5 * time.Second, MaxNodes: 1000, MaxWait: 10 * time.Second,
		ExpiryInterval: 50 * time.Millisecond, Recheck: 50 * time.Millisecond,
		Policy: ledger.Policy{MaxAttempts: 3, BackoffBase: time.Second, BackoffMax: 10 * time.Second,
			LockWindow: 2 * time.Minute, HistoryLimit: 10, ReprovisionAfter: 30 * time.Second},
	}
}

// StableTimeouts are slower than raftnode.LoopbackTimeouts, for tests that kill no member and
// take c1 as the leader throughout: an election caused by a stall of a loaded machine (-race,
// two shared cores) would only break them.
func StableTimeouts() raftnode.Timeouts {
	return raftnode.Timeouts{Heartbeat: 2 * time.Second, Election: 2 * time.Second, LeaderLease: 2 * time.Second, Commit: 10 * time.Millisecond}
}

// New makes a cluster of n stopped members c1..cn, each with its directory under t.TempDir;
// the members are stopped when the test ends.
func New(t testing.TB, n int, opts ...Option) *Cluster {
	t.Helper()
	c := &Cluster{t: t, Clock: NewClock(), Leases: LeaseConfig(), Timeouts: raftnode.LoopbackTimeouts()}
	for _, o := range opts {
		o(c)
	}
	if c.netem {
		c.Net = newNetem(t)
	}
	root := t.TempDir()
	for i := range n {
		id := fmt.Sprintf("c%d", i+1)
		m := &Member{c: c, ID: id, Dir: filepath.Join(root, id), Front: NewFront(t), URL: "http://" + id + ".invalid"}
		if c.serveAPI {
			m.serveAPI(t)
		}
		c.Members = append(c.Members, m)
		if c.Net != nil {
			c.Net.name(m.Front.Addr(), m.ID)
		}
	}
	t.Cleanup(c.CloseAll)
	return c
}

// T is the test the cluster belongs to.
func (c *Cluster) T() testing.TB { return c.t }

// Member returns the member named id, nil if there is none.
func (c *Cluster) Member(id string) *Member {
	for _, m := range c.Members {
		if m.ID == id {
			return m
		}
	}
	return nil
}

// adminToken is the token the members' admin APIs open with.
func (c *Cluster) adminToken() string {
	cfg := c.apiConfig(nil)
	if len(cfg.AdminTokens) == 0 {
		return ""
	}
	return cfg.AdminTokens[0]
}

// apiConfig is the HTTP configuration of member m's API (m nil: the parts common to all).
func (c *Cluster) apiConfig(m *Member) httpapi.Config {
	cfg := httpapi.Config{AdminTokens: []string{AdminToken}, EdgeTokens: []string{EdgeToken}, Errors: coordinator.HTTPErrors()}
	if m != nil {
		cfg.Self, cfg.Registry, cfg.Logger = m.URL, m.Reg, c.logger()
	}
	if c.editAPI != nil {
		c.editAPI(&cfg)
	}
	return cfg
}

func (c *Cluster) logger() *slog.Logger {
	if c.Logs == nil {
		return nil
	}
	return c.Logs.Logger(c.LogLevel)
}

// Start starts member m from its directory; bootstrap makes it a cluster of one.
func (c *Cluster) Start(m *Member, bootstrap bool) {
	c.t.Helper()
	m.Reg = prometheus.NewRegistry()
	cfg := coordinator.Config{
		ID: m.ID, DataDir: m.Dir, RaftBind: "127.0.0.1:0", RaftAdvertise: m.Front.Addr(), APIAddress: m.URL,
		Bootstrap: bootstrap, Join: !bootstrap, Timeouts: c.Timeouts, Leases: c.Leases,
		Registry: m.Reg, LedgerNoSync: c.LedgerNoSync, RaftNoSync: c.RaftNoSync, Logger: c.logger(),
		AdminToken: c.adminToken(), ProtocolInterval: cmp.Or(c.ProtocolInterval, 50*time.Millisecond), AnnounceProtocol: c.Announce[m.ID],
		MemberClient: c.MemberClient,
	}
	if clk := c.ClockOf(m); clk != nil {
		cfg.Clock = clk
	}
	if c.Net != nil {
		cfg.RaftDial = c.Net.dialer(m.ID)
	}
	if c.RaftTLS != nil {
		cfg.RaftTLS = c.RaftTLS(m.ID)
	}
	if c.EditConfig != nil {
		c.EditConfig(&cfg)
	}
	svc, err := coordinator.New(cfg)
	if err != nil {
		c.t.Fatalf("start %s: %v", m.ID, err)
	}
	c.mu.Lock()
	m.Svc = svc
	c.mu.Unlock()
	m.Front.SetTarget(svc.BoundRaftAddress())
	if m.API != nil {
		m.startAPI(c.t, c.apiConfig(m))
	}
}

// MemberClock gives member id a clock of its own in the cluster's world: its wall reading skewed
// by skew, both readings running at 1+drift of real time.
func (c *Cluster) MemberClock(id string, skew time.Duration, drift float64) {
	if c.clocks == nil {
		c.clocks = map[string]*testutil.Clock{}
	}
	c.clocks[id] = c.Clock.World().Clock(skew, drift)
}

// ClockOf is the clock member m stamps with (nil: the system clock).
func (c *Cluster) ClockOf(m *Member) *testutil.Clock {
	if mc := c.clocks[m.ID]; mc != nil {
		return mc
	}
	return c.Clock
}

// Service returns the member's running service, nil when stopped; safe from any goroutine.
func (m *Member) Service() *coordinator.Service {
	m.c.mu.Lock()
	defer m.c.mu.Unlock()
	return m.Svc
}

// StartAll bootstraps the first member, joins the others through the leader (its HTTP API when
// the cluster serves one) and waits until every member has applied the configuration; it
// returns the leader.
func (c *Cluster) StartAll() *Member {
	c.t.Helper()
	c.Start(c.Members[0], true)
	c.WaitLeader()
	for _, m := range c.Members[1:] {
		c.Start(m, false)
		c.Admit(m)
	}
	c.WaitConverged(c.Running()...)
	if c.serveAPI {
		// Every member knows the leader's API address once the member table has replicated.
		testkit.WaitFor(c.t, WaitLimit, "every member to name the leader", func() bool {
			l, _ := c.Leader()
			if l == nil {
				return false
			}
			for _, m := range c.Running() {
				if m.Svc.LeaderAPIAddress() != l.URL {
					return false
				}
			}
			return true
		})
	}
	return c.WaitLeader()
}

// Admit joins running member m as serve's join does: it asks the leader (through its HTTP API
// when the cluster serves one) until m needs nothing more, so a member without Raft state goes
// from learner to voter.
func (c *Cluster) Admit(m *Member) {
	c.t.Helper()
	testkit.WaitFor(c.t, WaitLimit, m.ID+" to be admitted", func() bool {
		svc := m.Service()
		req, err := svc.JoinRequest()
		if err != nil {
			c.t.Fatalf("join request of %s: %v", m.ID, err)
		}
		var resp api.JoinResponse
		if c.serveAPI {
			resp, err = c.joinThroughAPI(req)
		} else if l, lsvc := c.Leader(); l != nil {
			resp, err = lsvc.Join(context.Background(), req)
		} else {
			return false
		}
		if err != nil {
			if !LeadershipError(err) && !errors.Is(err, coordinator.ErrTimeout) {
				c.t.Fatalf("join %s: %v", m.ID, err)
			}
			return false
		}
		done, err := svc.Joined(req, resp)
		if err != nil {
			c.t.Fatalf("join %s: %v", m.ID, err)
		}
		return done
	})
}

// IsVoter reports whether the leader's configuration holds m as a voter.
func (c *Cluster) IsVoter(m *Member) bool {
	c.t.Helper()
	st, err := c.WaitLeader().Svc.Status(context.Background())
	if err != nil {
		c.t.Fatal(err)
	}
	for _, mm := range st.Members {
		if mm.ID == m.ID {
			return mm.Voter
		}
	}
	return false
}

// joinThroughAPI sends req to the leader's admin API.
func (c *Cluster) joinThroughAPI(req api.JoinRequest) (api.JoinResponse, error) {
	c.t.Helper()
	admin, err := api.NewClient([]string{c.WaitLeader().URL}, api.WithToken(c.adminToken()), api.WithRetryDelay(50*time.Millisecond))
	if err != nil {
		c.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), WaitLimit)
	defer cancel()
	return admin.Join(ctx, req)
}

// LeadershipError is an error after which the request belongs on another (or a newer) leader.
func LeadershipError(err error) bool {
	return errors.Is(err, coordinator.ErrNotLeader) || errors.Is(err, coordinator.ErrNoLeader) || errors.Is(err, coordinator.ErrNotReady)
}

// OnLeader runs fn on the current leader, again on the next one if leadership moved meanwhile (a
// loaded machine may see an election at any time; the client library does the same).
func (c *Cluster) OnLeader(what string, fn func(*Member) error) *Member {
	c.t.Helper()
	var last error
	for range 20 {
		l := c.WaitLeader()
		if last = fn(l); last == nil {
			return l
		}
		if !LeadershipError(last) {
			c.t.Fatalf("%s on %s: %v", what, l.ID, last)
		}
	}
	c.t.Fatalf("%s: leadership kept moving: %v", what, last)
	return nil
}

// Running returns the members that are started.
func (c *Cluster) Running() []*Member {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Member
	for _, m := range c.Members {
		if m.Svc != nil {
			out = append(out, m)
		}
	}
	return out
}

// Leader returns the running member that leads and its service if exactly one member claims to
// lead, else nils; safe from any goroutine.
func (c *Cluster) Leader() (*Member, *coordinator.Service) {
	var leader *Member
	var svc *coordinator.Service
	for _, m := range c.Running() {
		if s := m.Service(); s != nil && s.IsLeader() {
			if leader != nil {
				return nil, nil
			}
			leader, svc = m, s
		}
	}
	return leader, svc
}

// WaitLeader waits for exactly one running member to lead with its lease manager enabled.
func (c *Cluster) WaitLeader() *Member {
	c.t.Helper()
	var leader *Member
	testkit.WaitFor(c.t, WaitLimit, "an established leader", func() bool {
		leader, _ = c.Leader()
		return leader != nil
	})
	return leader
}

// WaitConverged waits until the members have applied the same index and hold identical ledgers.
func (c *Cluster) WaitConverged(ms ...*Member) {
	c.t.Helper()
	testkit.WaitFor(c.t, WaitLimit, "ledgers to converge", func() bool {
		var first []byte
		var idx uint64
		for i, m := range ms {
			d, err := m.Svc.Ledger().Digest()
			if err != nil {
				return false
			}
			ai, _, _ := m.Svc.Ledger().AppliedIndex()
			if i == 0 {
				first, idx = d, ai
				continue
			}
			if string(d) != string(first) || ai != idx {
				return false
			}
		}
		return true
	})
}

// Stop closes member m's service (its files stay for a restart); its API answers 503 meanwhile.
func (c *Cluster) Stop(m *Member) {
	c.t.Helper()
	c.mu.Lock()
	svc := m.Svc
	m.Svc = nil
	c.mu.Unlock()
	if svc == nil {
		return
	}
	m.handler.Store(nil)
	if err := svc.Close(); err != nil {
		c.t.Logf("close %s: %v", m.ID, err)
	}
	m.Front.SetTarget("")
}

// CloseAll stops every member.
func (c *Cluster) CloseAll() {
	for _, m := range c.Members {
		c.Stop(m)
	}
}

// Register registers nodes ids in region for edge-a on the leader.
func (c *Cluster) Register(region string, ids ...string) api.RegisterResponse {
	c.t.Helper()
	req := api.RegisterRequest{Region: region, Edge: "edge-a"}
	for _, id := range ids {
		req.Nodes = append(req.Nodes, api.RegisterNode{Identity: id})
	}
	var r api.RegisterResponse
	c.OnLeader("register", func(m *Member) error {
		var err error
		r, err = m.Svc.Register(context.Background(), req)
		return err
	})
	return r
}

// Acquire asks the leader for a lease of up to n nodes of region for edge.
func (c *Cluster) Acquire(edge, region string, n int) *api.Lease {
	c.t.Helper()
	var r api.AcquireResponse
	c.OnLeader("acquire", func(m *Member) error {
		var err error
		r, err = m.Svc.Acquire(context.Background(), api.AcquireRequest{Edge: edge, Region: region, MaxNodes: n})
		return err
	})
	return r.Lease
}

// Report sends req to the leader.
func (c *Cluster) Report(req api.ReportRequest) api.ReportResponse {
	c.t.Helper()
	var r api.ReportResponse
	c.OnLeader("report", func(m *Member) error {
		var err error
		r, err = m.Svc.Report(context.Background(), req)
		return err
	})
	return r
}

// NodeIDs returns n node identities: prefix followed by 00000, 00001, ...
func NodeIDs(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%05d", prefix, i)
	}
	return out
}

// NewFront is a proxy on a fixed address to a target that may change (SetTarget) or be absent;
// it is closed when the test ends.
func NewFront(t testing.TB) *proxy.Proxy {
	p, err := proxy.New(proxy.Options{Name: "front"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}
