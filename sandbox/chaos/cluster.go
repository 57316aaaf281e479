// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit/proxy"
	"github.com/seed96588659/muster/sandbox/stack/coordproc"
	"github.com/seed96588659/muster/sandbox/stack/wan"
)

// ClusterSpec is how the coordinator members run.
type ClusterSpec struct {
	Bin        string // muster-coordinator built with -tags muster_failpoints
	Dir        string
	Members    int
	LeaseTTL   time.Duration
	LeaseGrace time.Duration
	MaxWait    time.Duration
	// ReprovisionAfter is lease.reprovision_after.
	ReprovisionAfter time.Duration
	EdgeToken        string
	AdminToken       string
	// Profile places the members (and, through Place, the edges) in datacenters: the proxies
	// hold each link for half its round trip (sandbox/stack/wan); lan adds nothing.
	Profile wan.Profile
	// Env is more KEY=VALUE for every member's environment (MUSTER_ settings).
	Env []string
}

// Member is one coordinator process (its API on a fixed port, restarted with the same flags)
// with its Raft port behind a proxy that every other member dials (the advertised Raft
// address), and its failpoints directory.
type Member struct {
	*coordproc.Member
	RaftProxy *proxy.Proxy
	// APIProxy is the advertised API address (http.advertise): leaders name it to edges and
	// members forward through it, so an edge cut off by socket owner stays cut off after the
	// client follows a leader address.
	APIProxy *proxy.Proxy
	fpDir    string
}

// Cluster is the running coordinator cluster.
type Cluster struct {
	spec    ClusterSpec
	procs   *coordproc.Cluster
	Members []*Member
	admin   *api.Client

	mu    sync.Mutex
	pids  map[string]int
	sites map[string]int // where each member and edge runs, by name (Place)
}

// StartCluster starts the first member with --bootstrap, waits for it to lead, starts the
// others with --join, and waits for a leader of all of them.
func StartCluster(ctx context.Context, spec ClusterSpec) (*Cluster, error) {
	c := &Cluster{spec: spec, pids: map[string]int{}, sites: map[string]int{}}
	fronts := map[string]*Member{} // each member's proxies and failpoints, from its last try
	closeFronts := func() {
		for _, f := range fronts {
			f.closeProxies()
		}
	}
	procs, err := coordproc.Start(ctx, coordproc.Spec{
		Bin: spec.Bin, Dir: spec.Dir, Size: spec.Members,
		Auth: coordproc.Auth{AdminToken: spec.AdminToken, EdgeTokens: []string{spec.EdgeToken}},
		Lease: coordproc.Lease{
			TTL: spec.LeaseTTL, Grace: spec.LeaseGrace, MaxClockDrift: spec.LeaseGrace / 2,
			MaxWait: spec.MaxWait, ReprovisionAfter: spec.ReprovisionAfter,
			RetryBackoff: time.Second, RetryBackoffMax: 5 * time.Second,
		},
		LogLevel:            "info",
		Configure:           func(m *coordproc.MemberConfig) error { return c.front(m, fronts) },
		OnStart:             c.Track,
		ProcessGroup:        true,
		JoinAfterFirstLeads: true,
		StartTimeout:        60 * time.Second,
		LeaderTimeout:       90 * time.Second,
		StopGrace:           15 * time.Second,
	})
	if err != nil {
		closeFronts()
		return nil, err
	}
	c.procs = procs
	for _, pm := range procs.Members() {
		m := fronts[pm.ID]
		m.Member = pm
		c.Members = append(c.Members, m)
	}
	admin, err := api.NewClient(procs.URLs(), api.WithToken(spec.AdminToken), api.WithRetryDelay(100*time.Millisecond), api.WithHTTPClient(&http.Client{Timeout: 10 * time.Second}))
	if err != nil {
		c.Stop()
		return nil, err
	}
	c.admin = admin
	return c, nil
}

// front puts proxies in front of m's Raft and API listeners and advertises them, and gives m
// its failpoints directory. A try of m on other ports replaces the proxies of the last one.
func (c *Cluster) front(m *coordproc.MemberConfig, fronts map[string]*Member) error {
	if old := fronts[m.ID]; old != nil {
		old.closeProxies()
	}
	f := &Member{fpDir: filepath.Join(c.spec.Dir, m.ID, "failpoints")}
	fronts[m.ID] = f
	site := c.spec.Profile.MemberSite(memberIndex(m.ID))
	c.Place(m.ID, site)
	var err error
	if f.RaftProxy, err = proxy.New(proxy.Options{Name: "raft-" + m.ID, Target: m.Raft, Origin: c.origin, Latency: c.latencyTo(site), Jitter: proxy.UniformJitter}); err != nil {
		return err
	}
	if f.APIProxy, err = proxy.New(proxy.Options{Name: "api-" + m.ID, Target: strings.TrimPrefix(m.API, "http://"), Origin: c.origin, Latency: c.latencyTo(site), Jitter: proxy.UniformJitter}); err != nil {
		return err
	}
	if err := os.MkdirAll(f.fpDir, 0o755); err != nil {
		return fmt.Errorf("member %s: %w", m.ID, err)
	}
	m.AdvertiseRaft, m.AdvertiseAPI = f.RaftProxy.Addr(), "http://"+f.APIProxy.Addr()
	m.DataDir = filepath.Join(c.spec.Dir, m.ID, "data")
	m.Env = append(m.Env, c.spec.Profile.MemberEnv()...)
	m.Env = append(append(m.Env, c.spec.Env...), "MUSTER_FAILPOINTS_DIR="+f.fpDir)
	return nil
}

// closeProxies closes m's proxies.
func (m *Member) closeProxies() {
	for _, p := range []*proxy.Proxy{m.RaftProxy, m.APIProxy} {
		if p != nil {
			_ = p.Close()
		}
	}
}

// Track names pid as the process of name (a member or an edge) for the proxies' socket-owner
// lookups.
func (c *Cluster) Track(name string, pid int) {
	c.mu.Lock()
	c.pids[name] = pid
	c.mu.Unlock()
}

// Place records where the member or edge name runs, for the latency of its links.
func (c *Cluster) Place(name string, site int) {
	c.mu.Lock()
	c.sites[name] = site
	c.mu.Unlock()
}

// siteOf is where the member or edge name runs; false for a process Place never named (the
// runner's own checks).
func (c *Cluster) siteOf(name string) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	site, ok := c.sites[name]
	return site, ok
}

// link is the one-way latency between two places (wan.Profile.OneWay).
func (c *Cluster) link(a, b int) proxy.Latency {
	base, jitter := c.spec.Profile.OneWay(a, b)
	return proxy.Latency{Base: base, Jitter: jitter}
}

// latencyTo is the one-way latency of a link into site, by who opened it; none from a process
// it does not know.
func (c *Cluster) latencyTo(site int) func(origin string) proxy.Latency {
	return func(origin string) proxy.Latency {
		from, ok := c.siteOf(origin)
		if !ok {
			return proxy.Latency{}
		}
		return c.link(from, site)
	}
}

// memberIndex is the index of member id (c1 is 0), as coordproc names them.
func memberIndex(id string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "c"))
	if err != nil || n < 1 {
		return 0
	}
	return n - 1
}

// CutOff blocks, under the name block, at every member's advertised API, the connections
// name's process opens; Lift(block) lifts it.
func (c *Cluster) CutOff(block, name string) {
	for _, m := range c.Members {
		m.APIProxy.Block(block, func(origin string) bool { return origin == name })
	}
}

// Lift removes the block called block from every member's Raft and API proxies; the other
// faults' blocks stay (a heal that lifted them all ended overlapping faults early).
func (c *Cluster) Lift(block string) {
	for _, m := range c.Members {
		m.RaftProxy.Unblock(block)
		m.APIProxy.Unblock(block)
	}
}

// origin names the member or edge whose process opened a connection to a proxy.
func (c *Cluster) origin(remote *net.TCPAddr) string {
	c.mu.Lock()
	pids := make(map[string]int, len(c.pids))
	for k, v := range c.pids {
		pids[k] = v
	}
	c.mu.Unlock()
	return socketOwner(remote.Port, pids)
}

// Admin is the admin API client over every member.
func (c *Cluster) Admin() *api.Client { return c.admin }

// Member is the member with id, nil if unknown.
func (c *Cluster) Member(id string) *Member {
	for _, m := range c.Members {
		if m.ID == id {
			return m
		}
	}
	return nil
}

// WaitLeader waits until a member other than "not" leads want members, ready.
func (c *Cluster) WaitLeader(ctx context.Context, want int, not string) (*Member, error) {
	m, _, err := c.procs.WaitLeader(ctx, want, not)
	if err != nil {
		return nil, err
	}
	return c.Member(m.ID), nil
}

// StatusOf is m's own status (admin API), read within a few seconds.
func (c *Cluster) StatusOf(ctx context.Context, m *Member) (api.StatusResponse, error) {
	sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	st, err := c.admin.StatusOf(sctx, m.API)
	if err != nil {
		return st, fmt.Errorf("status of member %s: %w", m.ID, err)
	}
	return st, nil
}

// WaitMember waits until m, restarted, is a voter in the leader's configuration and has applied
// what the leader had committed when it came back.
func (c *Cluster) WaitMember(ctx context.Context, m *Member, limit time.Duration) error {
	_, st, err := c.procs.WaitLeader(ctx, len(c.Members), "")
	if err != nil {
		return err
	}
	target := st.CommitIndex
	return waitFor(ctx, "member "+m.ID+" a caught-up voter", limit, func() (bool, string) {
		ms, err := c.StatusOf(ctx, m)
		if err != nil {
			return false, err.Error()
		}
		l := c.Member(ms.LeaderID)
		if l == nil {
			return false, fmt.Sprintf("%s, no leader known", ms.State)
		}
		ls, err := c.StatusOf(ctx, l)
		if err != nil {
			return false, err.Error()
		}
		if !slices.ContainsFunc(ls.Members, func(x api.Member) bool { return x.ID == m.ID && x.Voter }) {
			return false, "not a voter in leader " + l.ID + "'s configuration"
		}
		if ms.AppliedIndex < target {
			return false, fmt.Sprintf("applied %d of %d", ms.AppliedIndex, target)
		}
		return true, ""
	})
}

// Isolate partitions m from the other members under the name block (Lift lifts it): its own
// Raft proxy refuses everything, and the others' proxies cut the connections m opened.
func (c *Cluster) Isolate(block string, m *Member) {
	for _, o := range c.Members {
		if o == m {
			o.RaftProxy.Block(block, nil)
			continue
		}
		// Only members dial a Raft proxy: one whose owner is not found is cut too, since a
		// partition that leaves one connection of the isolated leader up is no partition (its
		// replication pipeline keeps a quorum), and a cut one only reconnects.
		o.RaftProxy.Block(block, func(origin string) bool { return origin == m.ID || origin == "" })
	}
}

// CutDC cuts the datacenter of m from the rest under the name block (Lift lifts it): inside
// names m and the processes next to it. m's proxies refuse what anyone outside opened (the
// runner's own reads, whose owner is not a member or edge, still pass its API), and the other
// members' proxies refuse what the inside opened; a Raft connection of unknown owner is cut, as
// Isolate does.
func (c *Cluster) CutDC(block string, m *Member, inside map[string]bool) {
	known := func(origin string) bool {
		_, ok := c.siteOf(origin)
		return ok
	}
	for _, o := range c.Members {
		if o == m {
			o.RaftProxy.Block(block, nil)
			o.APIProxy.Block(block, func(origin string) bool { return known(origin) && !inside[origin] })
			continue
		}
		o.RaftProxy.Block(block, func(origin string) bool { return inside[origin] || origin == "" })
		o.APIProxy.Block(block, func(origin string) bool { return inside[origin] })
	}
}

// StepClock sets m's wall clock step (the failpoint file); 0 removes it.
func (c *Cluster) StepClock(m *Member, d time.Duration) error {
	p := filepath.Join(m.fpDir, "clock-step")
	if d == 0 {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("member %s: clear clock step: %w", m.ID, err)
		}
		return nil
	}
	if err := os.WriteFile(p+".tmp", []byte(d.String()+"\n"), 0o644); err != nil {
		return fmt.Errorf("member %s: clock step: %w", m.ID, err)
	}
	return os.Rename(p+".tmp", p)
}

// Logs is the last n lines of every member's log.
func (c *Cluster) Logs(n int) string { return c.procs.Logs(n) }

// Stop ends every member and proxy.
func (c *Cluster) Stop() {
	_ = c.procs.Stop()
	for _, m := range c.Members {
		m.closeProxies()
	}
}

// waitFor polls cond every 100ms until it holds, ctx ends or limit passes; the error carries
// cond's last word.
func waitFor(ctx context.Context, what string, limit time.Duration, cond func() (bool, string)) error {
	deadline := time.Now().Add(limit)
	last := ""
	for {
		ok, msg := cond()
		if ok {
			return nil
		}
		last = msg
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not after %s: %s", what, limit, last)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (last: %s)", what, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// FingerprintOf is member m's ledger fingerprint.
func (c *Cluster) FingerprintOf(ctx context.Context, m *Member) (api.Fingerprint, error) {
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	fp, err := c.admin.FingerprintOf(fctx, m.API)
	if err != nil {
		return fp, fmt.Errorf("ledger fingerprint of member %s: %w", m.ID, err)
	}
	return fp, nil
}
