// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/seed96588659/muster/pkg/api"
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
}

// Member is one coordinator process: its API on a fixed port, its Raft port behind a proxy
// that every other member dials (the advertised Raft address), its failpoints directory.
type Member struct {
	ID        string
	Proc      *Proc
	API       string // http://127.0.0.1:PORT, the member's own listener (admin calls)
	raftBind  string
	RaftProxy *Proxy
	// APIProxy is the advertised API address (http.advertise): leaders name it to edges and
	// members forward through it, so an edge cut off by socket owner stays cut off after the
	// client follows a leader address.
	APIProxy *Proxy
	fpDir    string
}

// Cluster is the running coordinator cluster.
type Cluster struct {
	spec    ClusterSpec
	Members []*Member
	admin   *api.Client

	mu   sync.Mutex
	pids map[string]int
}

// StartCluster starts the first member with --bootstrap and the others with --join, and waits
// for a leader of all of them.
func StartCluster(ctx context.Context, spec ClusterSpec) (*Cluster, error) {
	c := &Cluster{spec: spec, pids: map[string]int{}}
	for i := 1; i <= spec.Members; i++ {
		m := &Member{ID: fmt.Sprintf("c%d", i)}
		apiPort, err := freePort()
		if err != nil {
			return nil, err
		}
		raftPort, err := freePort()
		if err != nil {
			return nil, err
		}
		m.API = fmt.Sprintf("http://127.0.0.1:%d", apiPort)
		m.raftBind = fmt.Sprintf("127.0.0.1:%d", raftPort)
		if m.RaftProxy, err = NewProxy("raft-"+m.ID, m.raftBind, c.origin); err != nil {
			return nil, err
		}
		if m.APIProxy, err = NewProxy("api-"+m.ID, strings.TrimPrefix(m.API, "http://"), c.origin); err != nil {
			return nil, err
		}
		m.fpDir = filepath.Join(spec.Dir, m.ID, "failpoints")
		if err := os.MkdirAll(m.fpDir, 0o755); err != nil {
			return nil, fmt.Errorf("member %s: %w", m.ID, err)
		}
		c.Members = append(c.Members, m)
	}
	var urls []string
	for _, m := range c.Members {
		urls = append(urls, m.API)
	}
	admin, err := api.NewClient(urls, api.WithToken(spec.AdminToken), api.WithRetryDelay(100*time.Millisecond), api.WithHTTPClient(&http.Client{Timeout: 10 * time.Second}))
	if err != nil {
		return nil, err
	}
	c.admin = admin
	for i, m := range c.Members {
		m.Proc = &Proc{Name: "coordinator " + m.ID, Bin: spec.Bin, LogPath: filepath.Join(spec.Dir, m.ID+".log"), Args: c.args(m, i == 0),
			Env: []string{"MUSTER_AUTH_EDGE_TOKENS=" + spec.EdgeToken, "MUSTER_AUTH_ADMIN_TOKEN=" + spec.AdminToken, "MUSTER_FAILPOINTS_DIR=" + m.fpDir}}
		if err := c.startMember(ctx, m); err != nil {
			c.Stop()
			return nil, err
		}
		if i == 0 {
			if _, err := c.WaitLeader(ctx, 1, ""); err != nil {
				c.Stop()
				return nil, err
			}
		}
	}
	if _, err := c.WaitLeader(ctx, spec.Members, ""); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) args(m *Member, bootstrap bool) []string {
	s := c.spec
	args := []string{"serve", "--node-id", m.ID, "--data-dir", filepath.Join(s.Dir, m.ID, "data"),
		"--raft-bind", m.raftBind, "--raft-advertise", m.RaftProxy.Addr(),
		"--http-bind", strings.TrimPrefix(m.API, "http://"), "--http-advertise", "http://" + m.APIProxy.Addr(),
		"--lease-ttl", s.LeaseTTL.String(), "--lease-grace", s.LeaseGrace.String(),
		"--lease-max-clock-drift", (s.LeaseGrace / 2).String(),
		"--lease-max-wait", s.MaxWait.String(), "--lease-reprovision-after", s.ReprovisionAfter.String(),
		"--lease-retry-backoff", "1s", "--lease-retry-backoff-max", "5s",
		"--log-level", "info"}
	if bootstrap {
		return append(args, "--bootstrap")
	}
	// A restart passes the same flags, as an unchanged unit file would: joining again is a no-op.
	return append(args, "--join", c.Members[0].API)
}

// Track names pid as the process of name (an edge) for the proxies' socket-owner lookups.
func (c *Cluster) Track(name string, pid int) {
	c.mu.Lock()
	c.pids[name] = pid
	c.mu.Unlock()
}

// CutOff blocks, at every member's advertised API, the connections name's process opens (one
// name at a time: a second CutOff replaces the first). Mend lifts it.
func (c *Cluster) CutOff(name string) {
	for _, m := range c.Members {
		m.APIProxy.Block(func(origin string) bool { return origin == name })
	}
}

// Mend lifts CutOff.
func (c *Cluster) Mend() {
	for _, m := range c.Members {
		m.APIProxy.Heal()
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

// startMember starts m and waits until its API answers /healthz.
func (c *Cluster) startMember(ctx context.Context, m *Member) error {
	if err := m.Proc.Start(); err != nil {
		return err
	}
	c.Track(m.ID, m.Proc.PID())
	hc := &http.Client{Timeout: 2 * time.Second}
	return waitFor(ctx, "member "+m.ID+" API", 60*time.Second, func() (bool, string) {
		select {
		case <-m.Proc.Exited():
			return false, fmt.Sprintf("exited: %v (see %s)", m.Proc.ExitErr(), m.Proc.LogPath)
		default:
		}
		resp, err := hc.Get(m.API + "/healthz")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
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

// WaitLeader waits until some member reports a leader (not "not") with want members.
func (c *Cluster) WaitLeader(ctx context.Context, want int, not string) (*Member, error) {
	var leader *Member
	err := waitFor(ctx, fmt.Sprintf("a leader (not %q) of %d members", not, want), 90*time.Second, func() (bool, string) {
		for _, m := range c.Members {
			if m.Proc == nil || !m.Proc.Running() {
				continue
			}
			sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			st, err := c.admin.StatusOf(sctx, m.API)
			cancel()
			if err != nil {
				continue
			}
			if st.LeaderID != "" && st.LeaderID != not && len(st.Members) == want && st.State == "Leader" {
				leader = c.Member(st.LeaderID)
				return leader != nil, ""
			}
		}
		return false, "no member leads"
	})
	return leader, err
}

// Restart starts a stopped member again with its flags and ports.
func (c *Cluster) Restart(ctx context.Context, m *Member) error { return c.startMember(ctx, m) }

// Isolate partitions m from the other members: its own Raft proxy refuses everything, and the
// others' proxies cut the connections m opened.
func (c *Cluster) Isolate(m *Member) {
	for _, o := range c.Members {
		if o == m {
			o.RaftProxy.Partition()
			continue
		}
		o.RaftProxy.Block(func(origin string) bool { return origin == m.ID })
	}
}

// HealRaft lifts every Raft partition.
func (c *Cluster) HealRaft() {
	for _, m := range c.Members {
		m.RaftProxy.Heal()
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

// Stop ends every member and proxy.
func (c *Cluster) Stop() {
	var wg sync.WaitGroup
	for _, m := range c.Members {
		if m.Proc == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = m.Proc.Stop(15 * time.Second)
		}()
	}
	wg.Wait()
	for _, m := range c.Members {
		_ = m.RaftProxy.Close()
		_ = m.APIProxy.Close()
	}
}

// freePort asks the kernel for a free loopback port for a child to bind a moment later.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
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
