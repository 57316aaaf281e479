// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/internal/testutil"
	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/coordinator/lessor"
	"github.com/seed96588659/muster/coordinator/raftnode"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/pkg/testkit/proxy"
)

// newTestClock is the time the leaders stamp; tests move it, so lease expiry is decided by the test.
func newTestClock() *testutil.Clock {
	return testutil.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
}

// waitLimit is how long the cluster tests wait for a condition: generous, for a loaded machine.
const waitLimit = 30 * time.Second

type member struct {
	c   *cluster
	id  string
	dir string
	// front is the member's advertised Raft address for the whole test: a proxy to whatever
	// port the member bound last, so a restart never depends on getting its old port back.
	front *proxy.Proxy
	svc   *coordinator.Service
	reg   *prometheus.Registry
}

type cluster struct {
	t testing.TB
	// memberMu guards each member's svc, which edges in other goroutines read.
	memberMu sync.Mutex
	clock    *testutil.Clock
	// clocks holds the members that have a clock of their own; the others share clock.
	clocks  map[string]*testutil.Clock
	members []*member
	net     *netem
	leases  lessor.Config
	// raftTLS, when set, gives each member its Raft TLS config.
	raftTLS func(id string) *tls.Config
	// ledgerNoSync and raftNoSync are for benchmarks only.
	ledgerNoSync, raftNoSync bool
	// apis, when set (serveAPIs), serves each member's real API on loopback.
	apis map[string]*apiFront
	// announce is the protocol a member says it applies (a member of an older build); absent
	// takes the newest.
	announce map[string]int
	// logs, when set, receives every member's log lines.
	logs *testkit.LogBuffer
	// protocolInterval is how often a leader asks the members for their protocol (50ms if 0).
	protocolInterval time.Duration
}

func testLeaseConfig() lessor.Config {
	return lessor.Config{
		TTL: 30 * time.Second, Grace: 5 * time.Second, MaxNodes: 1000, MaxWait: 10 * time.Second,
		ExpiryInterval: 50 * time.Millisecond, Recheck: 50 * time.Millisecond,
		Policy: ledger.Policy{MaxAttempts: 3, BackoffBase: time.Second, BackoffMax: 10 * time.Second,
			LockWindow: 2 * time.Minute, HistoryLimit: 10, ReprovisionAfter: 30 * time.Second},
	}
}

func newCluster(t testing.TB, n int, withNet bool) *cluster {
	t.Helper()
	c := &cluster{t: t, clock: newTestClock(), leases: testLeaseConfig()}
	if withNet {
		c.net = newNetem(t)
	}
	root := t.TempDir()
	for i := range n {
		m := &member{c: c, id: fmt.Sprintf("c%d", i+1), dir: filepath.Join(root, fmt.Sprintf("c%d", i+1)), front: newFront(t)}
		c.members = append(c.members, m)
		if c.net != nil {
			c.net.name(m.front.Addr(), m.id)
		}
	}
	t.Cleanup(c.closeAll)
	return c
}

func (c *cluster) start(m *member, bootstrap bool) {
	c.t.Helper()
	m.reg = prometheus.NewRegistry()
	cfg := coordinator.Config{
		ID: m.id, DataDir: m.dir, RaftBind: "127.0.0.1:0", RaftAdvertise: m.front.Addr(), APIAddress: c.apiAddress(m.id),
		Bootstrap: bootstrap, Timeouts: raftnode.LoopbackTimeouts(), Leases: c.leases,
		Clock: c.clockOfID(m.id), Registry: m.reg, LedgerNoSync: c.ledgerNoSync, RaftNoSync: c.raftNoSync,
		AdminToken: testAdminToken, ProtocolInterval: cmp.Or(c.protocolInterval, 50*time.Millisecond), AnnounceProtocol: c.announce[m.id],
	}
	if c.logs != nil {
		cfg.Logger = slog.New(slog.NewTextHandler(c.logs, nil))
	}
	if c.net != nil {
		cfg.RaftDial = c.net.dialer(m.id)
	}
	if c.raftTLS != nil {
		cfg.RaftTLS = c.raftTLS(m.id)
	}
	svc, err := coordinator.New(cfg)
	if err != nil {
		c.t.Fatalf("start %s: %v", m.id, err)
	}
	c.memberMu.Lock()
	m.svc = svc
	c.memberMu.Unlock()
	m.front.SetTarget(svc.BoundRaftAddress())
	if f := c.apis[m.id]; f != nil {
		f.serve(c.t, svc)
	}
}

// memberClock gives member id a clock of its own in the cluster's world: its wall reading skewed
// by skew, both readings running at 1+drift of real time.
func (c *cluster) memberClock(id string, skew time.Duration, drift float64) {
	if c.clocks == nil {
		c.clocks = map[string]*testutil.Clock{}
	}
	c.clocks[id] = c.clock.World().Clock(skew, drift)
}

func (c *cluster) clockOfID(id string) *testutil.Clock {
	if mc := c.clocks[id]; mc != nil {
		return mc
	}
	return c.clock
}

// clockOf is the clock member m stamps with.
func (c *cluster) clockOf(m *member) *testutil.Clock { return c.clockOfID(m.id) }

// service returns the member's running service, nil when stopped; safe from any goroutine.
func (m *member) service() *coordinator.Service {
	m.c.memberMu.Lock()
	defer m.c.memberMu.Unlock()
	return m.svc
}

// startAll bootstraps the first member, joins the others through the leader and waits until every
// member has applied the configuration.
func (c *cluster) startAll() *member {
	c.t.Helper()
	c.start(c.members[0], true)
	c.waitLeader()
	for _, m := range c.members[1:] {
		c.start(m, false)
		c.onLeader("join "+m.id, func(l *member) error {
			return l.svc.Join(context.Background(), api.JoinRequest{ID: m.id, RaftAddress: m.svc.RaftAddress(), APIAddress: c.apiAddress(m.id)})
		})
	}
	c.waitConverged(c.running()...)
	return c.waitLeader()
}

// leadershipError is an error after which the request belongs on another (or a newer) leader.
func leadershipError(err error) bool {
	return errors.Is(err, coordinator.ErrNotLeader) || errors.Is(err, coordinator.ErrNoLeader) || errors.Is(err, coordinator.ErrNotReady)
}

// onLeader runs fn on the current leader, again on the next one if leadership moved meanwhile (a
// loaded machine may see an election at any time; the client library does the same).
func (c *cluster) onLeader(what string, fn func(*member) error) *member {
	c.t.Helper()
	var last error
	for range 20 {
		l := c.waitLeader()
		if last = fn(l); last == nil {
			return l
		}
		if !leadershipError(last) {
			c.t.Fatalf("%s on %s: %v", what, l.id, last)
		}
	}
	c.t.Fatalf("%s: leadership kept moving: %v", what, last)
	return nil
}

func (c *cluster) running() []*member {
	c.memberMu.Lock()
	defer c.memberMu.Unlock()
	var out []*member
	for _, m := range c.members {
		if m.svc != nil {
			out = append(out, m)
		}
	}
	return out
}

// waitLeader waits for exactly one running member to lead with its lease manager enabled.
func (c *cluster) waitLeader() *member {
	c.t.Helper()
	var leader *member
	testkit.WaitFor(c.t, waitLimit, "an established leader", func() bool {
		leader = nil
		n := 0
		for _, m := range c.running() {
			if m.svc.IsLeader() {
				leader = m
				n++
			}
		}
		return n == 1
	})
	return leader
}

// waitConverged waits until the members have applied the same index and hold identical ledgers.
func (c *cluster) waitConverged(ms ...*member) {
	c.t.Helper()
	testkit.WaitFor(c.t, waitLimit, "ledgers to converge", func() bool {
		var first []byte
		var idx uint64
		for i, m := range ms {
			d, err := m.svc.Ledger().Digest()
			if err != nil {
				return false
			}
			ai, _, _ := m.svc.Ledger().AppliedIndex()
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

func (c *cluster) stop(m *member) {
	c.t.Helper()
	c.memberMu.Lock()
	svc := m.svc
	m.svc = nil
	c.memberMu.Unlock()
	if svc == nil {
		return
	}
	if f := c.apis[m.id]; f != nil {
		f.serve(c.t, nil)
	}
	if err := svc.Close(); err != nil {
		c.t.Logf("close %s: %v", m.id, err)
	}
	m.front.SetTarget("")
}

func (c *cluster) closeAll() {
	for _, m := range c.members {
		c.stop(m)
	}
}

func (c *cluster) register(region string, ids ...string) api.RegisterResponse {
	c.t.Helper()
	req := api.RegisterRequest{Region: region, Edge: "edge-a"}
	for _, id := range ids {
		req.Nodes = append(req.Nodes, api.RegisterNode{Identity: id})
	}
	var r api.RegisterResponse
	c.onLeader("register", func(m *member) error {
		var err error
		r, err = m.svc.Register(context.Background(), req)
		return err
	})
	return r
}

func (c *cluster) acquire(edge, region string, n int) *api.Lease {
	c.t.Helper()
	var r api.AcquireResponse
	c.onLeader("acquire", func(m *member) error {
		var err error
		r, err = m.svc.Acquire(context.Background(), api.AcquireRequest{Edge: edge, Region: region, MaxNodes: n})
		return err
	})
	return r.Lease
}

func nodeIDs(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%05d", prefix, i)
	}
	return out
}

// netem is a set of TCP proxies, one per direction between two members, so a test can cut a
// member off and heal it while raft runs its real transport.
type netem struct {
	t       testing.TB
	mu      sync.Mutex
	names   map[string]string // raft address -> member id
	proxies map[string]*link  // "from>addr"
	blocked map[string]bool
}

// link is the proxy from one member to another's raft address.
type link struct {
	*proxy.Proxy
	from, to string
}

func newNetem(t testing.TB) *netem {
	n := &netem{t: t, names: map[string]string{}, proxies: map[string]*link{}, blocked: map[string]bool{}}
	t.Cleanup(n.close)
	return n
}

func (n *netem) name(addr, id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.names[addr] = id
}

func (n *netem) dialer(from string) func(string, time.Duration) (net.Conn, error) {
	return func(addr string, timeout time.Duration) (net.Conn, error) {
		l, err := n.link(from, addr)
		if err != nil {
			return nil, err
		}
		return net.DialTimeout("tcp", l.Addr(), timeout)
	}
}

func (n *netem) link(from, addr string) (*link, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	key := from + ">" + addr
	if l, ok := n.proxies[key]; ok {
		return l, nil
	}
	l := &link{from: from, to: n.names[addr]}
	p, err := proxy.New(proxy.Options{Name: key, Target: addr})
	if err != nil {
		return nil, err
	}
	l.Proxy = p
	if n.blocked[l.from] || n.blocked[l.to] {
		p.Partition()
	}
	n.proxies[key] = l
	return l, nil
}

// partition cuts every link to and from id, including open connections.
func (n *netem) partition(id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.blocked[id] = true
	for _, l := range n.proxies {
		if l.from == id || l.to == id {
			l.Partition()
		}
	}
}

// heal restores the links of id whose other end is not cut off too.
func (n *netem) heal(id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.blocked, id)
	for _, l := range n.proxies {
		if (l.from == id || l.to == id) && !n.blocked[l.from] && !n.blocked[l.to] {
			l.Heal()
		}
	}
}

func (n *netem) close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, l := range n.proxies {
		l.Close()
	}
}

// newFront is a proxy on a fixed address to a target that may change (SetTarget) or be absent.
func newFront(t testing.TB) *proxy.Proxy {
	p, err := proxy.New(proxy.Options{Name: "front"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}
