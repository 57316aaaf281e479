// SPDX-License-Identifier: Apache-2.0

package browsersuite

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

const (
	edgeToken  = "browsersuite-edge-token-0123456789"
	adminToken = "browsersuite-admin-token-0123456789"
)

// member is one muster-coordinator child process.
type member struct {
	id      string
	url     string
	raft    string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
}

// cluster is a set of members started by a test and stopped by its cleanup.
type cluster struct {
	t       *testing.T
	dir     string
	members []*member
}

// startCluster starts c1, which bootstraps, then the others, which join it, and waits for a
// leader of all n.
func startCluster(t *testing.T, n int) (*cluster, api.StatusResponse) {
	t.Helper()
	c := &cluster{t: t, dir: t.TempDir()}
	t.Cleanup(c.stop)
	first := c.start("c1", "")
	c.waitLeader(1, "")
	for i := 2; i <= n; i++ {
		c.start(fmt.Sprintf("c%d", i), first.url)
	}
	return c, c.waitLeader(n, "")
}

// start runs a member; a port taken between freePort and the member's bind makes it exit at
// once, and it is started again on fresh ports.
func (c *cluster) start(id, join string) *member {
	m := &member{id: id}
	for try := 1; ; try++ {
		m.url = "http://" + freeAddr(c.t)
		m.raft = freeAddr(c.t)
		c.launch(m, join)
		if c.listening(m) || try == 3 {
			break
		}
	}
	c.members = append(c.members, m)
	return m
}

func (c *cluster) launch(m *member, join string) {
	m.logPath = filepath.Join(c.dir, fmt.Sprintf("%s.%d.log", m.id, time.Now().UnixNano()))
	m.exited = make(chan struct{})
	args := []string{"serve",
		"--node-id", m.id,
		"--data-dir", filepath.Join(c.dir, m.id),
		"--raft-bind", m.raft,
		"--http-bind", m.url[len("http://"):],
		"--lease-ttl", "30s",
		"--lease-max-wait", "5s",
	}
	if join == "" {
		args = append(args, "--bootstrap")
	} else {
		args = append(args, "--join", join)
	}
	logf, err := os.Create(m.logPath)
	if err != nil {
		c.t.Fatal(err)
	}
	m.cmd = exec.Command(suite.coordinator, args...)
	m.cmd.Stdout, m.cmd.Stderr = logf, logf
	m.cmd.Env = append(os.Environ(), "MUSTER_AUTH_EDGE_TOKENS="+edgeToken, "MUSTER_AUTH_ADMIN_TOKEN="+adminToken)
	if err := m.cmd.Start(); err != nil {
		c.t.Fatalf("start %s: %v", m.id, err)
	}
	exited, cmd := m.exited, m.cmd
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(exited)
	}()
}

// listening waits for the member's own "api listening" line and a /healthz answer; false when
// it exited first.
func (c *cluster) listening(m *member) bool {
	ok := false
	waitFor(c.t, "member "+m.id+" to listen", 30*time.Second, func() (bool, string) {
		select {
		case <-m.exited:
			b, _ := os.ReadFile(m.logPath)
			c.t.Logf("member %s exited at start, trying other ports: %s", m.id, tail(b, 2000))
			return true, ""
		default:
		}
		if b, _ := os.ReadFile(m.logPath); !bytes.Contains(b, []byte("api listening")) {
			return false, "no api listening line yet"
		}
		resp, err := http.Get(m.url + "/healthz")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		ok = true
		return true, ""
	})
	return ok
}

// kill sends SIGKILL to a member and waits for it to exit.
func (c *cluster) kill(m *member) {
	if err := m.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		c.t.Fatalf("kill %s: %v", m.id, err)
	}
	<-m.exited
}

func (c *cluster) stop() {
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
		}
	}
	if c.t.Failed() {
		for _, m := range c.members {
			b, _ := os.ReadFile(m.logPath)
			c.t.Logf("---- log of %s (tail) ----\n%s", m.id, tail(b, 4000))
		}
	}
}

func (c *cluster) member(id string) *member {
	for _, m := range c.members {
		if m.id == id {
			return m
		}
	}
	c.t.Fatalf("no member %q", id)
	return nil
}

// urls lists the API URLs of the members but except.
func (c *cluster) urls(except string) []string {
	var out []string
	for _, m := range c.members {
		if m.id != except {
			out = append(out, m.url)
		}
	}
	return out
}

// client is an API client for every member but except, with the given token.
func (c *cluster) client(token, except string) *api.Client {
	cl, err := api.NewClient(c.urls(except), api.WithToken(token), api.WithRetryDelay(100*time.Millisecond))
	if err != nil {
		c.t.Fatal(err)
	}
	return cl
}

// waitLeader waits until a member that is not `not` reports a leader (not `not`) that is ready
// and has want members, and returns that member's status.
func (c *cluster) waitLeader(want int, not string) api.StatusResponse {
	var st api.StatusResponse
	admin := c.client(adminToken, not)
	waitFor(c.t, fmt.Sprintf("a leader (not %q) of %d members", not, want), 60*time.Second, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var err error
		if st, err = admin.Status(ctx); err != nil {
			return false, err.Error()
		}
		if st.LeaderID == "" || st.LeaderID == not || len(st.Members) != want {
			return false, fmt.Sprintf("%+v", st)
		}
		// The leader is ready once a leader-only read goes through.
		if _, err := admin.Nodes(ctx, api.NodeFilter{Limit: 1}); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	return st
}

// freeAddr reserves a port on 127.0.0.1 and releases it for a child process to bind.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// waitFor polls cond until it holds or timeout passes, then fails the test with cond's last word.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		ok, msg := cond()
		if ok {
			return
		}
		last = msg
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s: %s", timeout, what, last)
		}
		time.Sleep(100 * time.Millisecond) // polling interval
	}
}
