// SPDX-License-Identifier: Apache-2.0

package clustersuite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

const adminToken = "clustersuite-admin-token-0123456789"

// Coordinator lease settings of the suite: a short TTL so a cut edge loses its lease within
// seconds, and a long grace so its report after the cut heals still finds the lease (the edge
// stops at ttl - margin, the leader expires at ttl + grace).
var leaseArgs = []string{
	"--lease-ttl", "6s",
	"--lease-grace", "10s",
	"--lease-max-wait", "2s",
	"--lease-retry-backoff", "500ms",
	"--lease-retry-backoff-max", "1s",
	"--lease-max-attempts", "3",
}

// edgeToken is the bearer token the coordinators bind to edge n of region.
func edgeToken(region string, n int) string { return fmt.Sprintf("token-%s-%d-0123456789", region, n) }

// member is one muster-coordinator process.
type member struct {
	id      string
	apiURL  string
	raft    string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
}

// cluster is three coordinator members started from the binary built for the package.
type cluster struct {
	bin     string
	dir     string
	edges   []string // auth.edges items
	members []*member
	admin   *api.Client
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startCluster starts c1 (bootstrap), then c2 and c3 joining it, and waits for a leader of three.
func startCluster(bin, dir string, edges []string) (*cluster, error) {
	c := &cluster{bin: bin, dir: dir, edges: edges}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	first, err := c.start("c1", true, "")
	if err != nil {
		return c, err
	}
	for _, id := range []string{"c2", "c3"} {
		if _, err := c.start(id, false, first.apiURL); err != nil {
			return c, err
		}
	}
	c.admin, err = api.NewClient(c.urls(), api.WithToken(adminToken))
	if err != nil {
		return c, err
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		st, err := c.admin.Status(ctx)
		cancel()
		if err == nil && st.Leader != "" && len(st.Members) == 3 {
			return c, nil
		}
		if time.Now().After(deadline) {
			return c, fmt.Errorf("no leader of 3 members within 90s (last %+v, %v): %s", st, err, c.logs())
		}
		time.Sleep(100 * time.Millisecond) // polling interval
	}
}

func (c *cluster) start(id string, bootstrap bool, join string) (*member, error) {
	m := &member{id: id}
	var lastErr error
	// A freed port may be taken before the member binds it: try fresh ports.
	for try := 0; try < 3; try++ {
		ap, err := freePort()
		if err != nil {
			return nil, err
		}
		rp, err := freePort()
		if err != nil {
			return nil, err
		}
		m.apiURL = fmt.Sprintf("http://127.0.0.1:%d", ap)
		m.raft = fmt.Sprintf("127.0.0.1:%d", rp)
		if lastErr = c.launch(m, bootstrap, join); lastErr == nil {
			c.members = append(c.members, m)
			return m, nil
		}
	}
	return nil, lastErr
}

func (c *cluster) launch(m *member, bootstrap bool, join string) error {
	m.logPath = filepath.Join(c.dir, fmt.Sprintf("%s.%d.log", m.id, time.Now().UnixNano()))
	m.exited = make(chan struct{})
	args := []string{"serve",
		"--node-id", m.id,
		"--data-dir", filepath.Join(c.dir, m.id),
		"--raft-bind", m.raft,
		"--http-bind", strings.TrimPrefix(m.apiURL, "http://"),
		"--log-level", "info",
	}
	args = append(args, leaseArgs...)
	if bootstrap {
		args = append(args, "--bootstrap")
	}
	if join != "" {
		args = append(args, "--join", join)
	}
	logf, err := os.Create(m.logPath)
	if err != nil {
		return err
	}
	m.cmd = exec.Command(c.bin, args...)
	m.cmd.Stdout, m.cmd.Stderr = logf, logf
	m.cmd.Env = append(os.Environ(), "MUSTER_AUTH_ADMIN_TOKEN="+adminToken, "MUSTER_AUTH_EDGES="+strings.Join(c.edges, ","))
	if err := m.cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	go func() {
		_ = m.cmd.Wait()
		logf.Close()
		close(m.exited)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-m.exited:
			b, _ := os.ReadFile(m.logPath)
			return fmt.Errorf("member %s exited at start: %s", m.id, b)
		default:
		}
		if b, _ := os.ReadFile(m.logPath); bytes.Contains(b, []byte("api listening")) {
			return nil
		}
		time.Sleep(50 * time.Millisecond) // polling interval
	}
	return fmt.Errorf("member %s did not listen within 30s", m.id)
}

func (c *cluster) urls() []string {
	out := make([]string, len(c.members))
	for i, m := range c.members {
		out[i] = m.apiURL
	}
	return out
}

// stop ends every member (TERM, then KILL after 15s).
func (c *cluster) stop() error {
	var errs []error
	for _, m := range c.members {
		select {
		case <-m.exited:
			continue
		default:
		}
		_ = m.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-m.exited:
		case <-time.After(15 * time.Second):
			_ = m.cmd.Process.Kill()
			<-m.exited
			errs = append(errs, fmt.Errorf("member %s ignored SIGTERM for 15s", m.id))
		}
	}
	return errors.Join(errs...)
}

// logs is the tail of every member's log, for failures.
func (c *cluster) logs() string {
	var b strings.Builder
	for _, m := range c.members {
		out, _ := os.ReadFile(m.logPath)
		if len(out) > 4000 {
			out = out[len(out)-4000:]
		}
		fmt.Fprintf(&b, "---- %s ----\n%s\n", m.id, out)
	}
	return b.String()
}

// nodes reads every node of region from the leader's ledger.
func (c *cluster) nodes(ctx context.Context, region string) (map[string]api.Node, error) {
	out := map[string]api.Node{}
	after := ""
	for {
		page, err := c.admin.Nodes(ctx, api.NodeFilter{Region: region, After: after, Limit: 1000})
		if err != nil {
			return nil, err
		}
		for _, n := range page.Nodes {
			out[n.Identity] = n
		}
		if page.Next == "" {
			return out, nil
		}
		after = page.Next
	}
}
