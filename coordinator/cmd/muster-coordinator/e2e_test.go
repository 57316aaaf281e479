// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	bolt "go.etcd.io/bbolt"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

const (
	e2eEdgeToken  = "e2e-edge-token-0123456789"
	e2eAdminToken = "e2e-admin-token-0123456789"
	// A reader and an operator of auth.admins, beside the admin token.
	e2eReaderToken   = "e2e-reader-token-0123456789"
	e2eOperatorToken = "e2e-operator-token-0123456789"
)

// buildBinary compiles muster-coordinator once per test into a temporary directory.
func buildBinary(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "muster-coordinator")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GONOSUMDB=github.com/choria-io")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// proc is one member running as a child process.
type proc struct {
	id      string
	apiURL  string
	raft    string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
}

type e2eCluster struct {
	t     testing.TB
	bin   string
	dir   string
	procs []*proc
	// For a cluster over TLS: extra serve flags, extra admin CLI flags, and a client for /healthz.
	serveArgs []string
	cliArgs   []string
	https     *http.Client
}

func (c *e2eCluster) scheme() string {
	if c.https != nil {
		return "https"
	}
	return "http"
}

func (c *e2eCluster) start(id string, bootstrap bool, join string) *proc {
	p := &proc{id: id}
	// A port freed by freePort may be taken by another process before the member binds it:
	// then the member exits at once and is started again on fresh ports. The Raft port, which a
	// restart must bind again, lies below the ephemeral range (testkit.StablePort): an outgoing
	// connection took one of that range while its member was down (TestE2E_ReadWithoutALeader...).
	fresh := func() {
		p.apiURL = c.freeAPIURL()
		p.raft = fmt.Sprintf("127.0.0.1:%d", testkit.StablePort(c.t))
	}
	fresh()
	c.launchRetrying(p, bootstrap, join, fresh)
	c.procs = append(c.procs, p)
	return p
}

// relaunch restarts p from its data directory on its Raft address, which the cluster's
// configuration names. Its API port may have been taken meanwhile by another process: the
// member then exits before it opens its state and is started again on a fresh API port.
func (c *e2eCluster) relaunch(p *proc, bootstrap bool, join string) {
	c.launchRetrying(p, bootstrap, join, func() { p.apiURL = c.freeAPIURL() })
}

// launchRetrying launches p until it listens, three tries at most, calling repick between them.
func (c *e2eCluster) launchRetrying(p *proc, bootstrap bool, join string, repick func()) {
	for try := 1; ; try++ {
		c.launch(p, bootstrap, join)
		if c.listening(p) || try == 3 {
			return
		}
		repick()
	}
}

func (c *e2eCluster) freeAPIURL() string {
	return fmt.Sprintf("%s://127.0.0.1:%d", c.scheme(), testkit.FreePort(c.t))
}

// listening waits until the member logged that its API listens and answers /healthz; false if it
// exited first. The log line is the member's own: another process that took the freed port could
// answer /healthz too.
func (c *e2eCluster) listening(p *proc) bool {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			b, _ := os.ReadFile(p.logPath)
			c.t.Logf("member %s exited at start, trying other ports: %s", p.id, b)
			return false
		default:
		}
		hc := http.DefaultClient
		if c.https != nil {
			hc = c.https
		}
		if b, _ := os.ReadFile(p.logPath); bytes.Contains(b, []byte("api listening")) {
			resp, err := hc.Get(p.apiURL + "/healthz")
			if err == nil {
				resp.Body.Close()
				return true
			}
		}
		time.Sleep(50 * time.Millisecond) // polling interval
	}
	return true // let the caller's own wait report what is wrong
}

// launch starts p on its ports and data dir. A restart passes the flags of the first start, as an
// unchanged unit file would: bootstrap and join must be harmless on a member that has state.
func (c *e2eCluster) launch(p *proc, bootstrap bool, join string) {
	t := c.t
	id := p.id
	p.logPath = filepath.Join(c.dir, fmt.Sprintf("%s.%d.log", id, time.Now().UnixNano()))
	p.exited = make(chan struct{})
	args := []string{"serve",
		"--node-id", id,
		"--data-dir", filepath.Join(c.dir, id),
		"--raft-bind", p.raft,
		"--http-bind", strings.TrimPrefix(p.apiURL, c.scheme()+"://"),
		"--lease-ttl", "20s",
		"--lease-grace", "1s",
		"--lease-max-wait", "5s",
		"--log-level", "debug",
	}
	args = append(args, c.serveArgs...)
	if bootstrap {
		args = append(args, "--bootstrap")
	}
	if join != "" {
		args = append(args, "--join", join)
	}
	logf, err := os.Create(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(c.bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	p.cmd.Env = append(os.Environ(), "MUSTER_AUTH_EDGE_TOKENS="+e2eEdgeToken, "MUSTER_AUTH_ADMIN_TOKEN="+e2eAdminToken,
		"MUSTER_AUTH_ADMINS=rita:read="+e2eReaderToken+" otto:operate="+e2eOperatorToken)
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := p.exited
	cmd := p.cmd
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(exited)
	}()
}

func (c *e2eCluster) stopAll() {
	for _, p := range c.procs {
		select {
		case <-p.exited:
			continue
		default:
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(15 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
	if c.t.Failed() {
		for _, p := range c.procs {
			b, _ := os.ReadFile(p.logPath)
			if len(b) > 6000 {
				b = b[len(b)-6000:]
			}
			c.t.Logf("---- log of %s (tail) ----\n%s", p.id, b)
		}
		for _, p := range c.procs {
			c.t.Logf("files of %s: %s", p.id, memberFiles(filepath.Join(c.dir, p.id)))
		}
	}
}

// memberFiles describes a stopped member's state on disk: what its ledger applied (index, term,
// digest) and how far its Raft log goes, so a failed test shows whether the members diverged or
// only one was behind.
func memberFiles(dir string) string {
	var b strings.Builder
	if l, err := ledger.Open(filepath.Join(dir, "ledger.db"), ledger.Options{}); err != nil {
		fmt.Fprintf(&b, "ledger: %v", err)
	} else {
		index, term, _ := l.AppliedIndex()
		d, _ := l.Digest()
		fmt.Fprintf(&b, "ledger applied %d (term %d), digest %x", index, term, d[:min(8, len(d))])
		_ = l.Close()
	}
	s, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft.db"), BoltOptions: &bolt.Options{ReadOnly: true, Timeout: time.Second}})
	if err != nil {
		fmt.Fprintf(&b, "; raft log: %v", err)
		return b.String()
	}
	defer s.Close()
	last, _ := s.LastIndex()
	var lg raft.Log
	_ = s.GetLog(last, &lg)
	term, _ := s.GetUint64([]byte("CurrentTerm"))
	fmt.Fprintf(&b, "; raft log to %d (term %d), current term %d", last, lg.Term, term)
	return b.String()
}

// apiURLs lists the members' API URLs but except's.
func (c *e2eCluster) apiURLs(except string) []string {
	var out []string
	for _, p := range c.procs {
		if p.id != except {
			out = append(out, p.apiURL)
		}
	}
	return out
}

// registerNodes registers n nodes, prefix-00 on, in region as edge e1 through any member and
// returns that edge's client.
func (c *e2eCluster) registerNodes(ctx context.Context, t *testing.T, region, prefix string, n int) *api.Client {
	t.Helper()
	edge, _ := api.NewClient(c.apiURLs(""), api.WithToken(e2eEdgeToken))
	var nodes []api.RegisterNode
	for i := range n {
		nodes = append(nodes, api.RegisterNode{Identity: fmt.Sprintf("%s-%02d", prefix, i)})
	}
	if _, err := edge.Register(ctx, api.RegisterRequest{Region: region, Edge: "e1", Nodes: nodes}); err != nil {
		t.Fatal(err)
	}
	return edge
}

// addrs is apiURLs as the --addr flag takes them.
func (c *e2eCluster) addrs(except string) string { return strings.Join(c.apiURLs(except), ",") }

// startThree starts c1, which bootstraps, and c2 and c3, which join it, and waits for a leader of
// all three.
func startThree(t testing.TB) (*e2eCluster, api.StatusResponse) {
	t.Helper()
	c := &e2eCluster{t: t, bin: buildBinary(t), dir: t.TempDir()}
	t.Cleanup(c.stopAll)
	first := c.start("c1", true, "")
	c.waitLeader(t, first.apiURL, 1, "")
	c.start("c2", false, first.apiURL)
	c.start("c3", false, first.apiURL)
	return c, c.waitLeader(t, c.addrs(""), 3, "")
}

// startThreeWithNodes begins a test on three member processes (skipped with -short): it starts
// them, registers n nodes, prefix-00 on, in region as edge e1, and returns the cluster, that
// edge's client and a context that ends after three minutes or with the test.
func startThreeWithNodes(t *testing.T, region, prefix string, n int) (*e2eCluster, *api.Client, context.Context) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts three coordinator processes")
	}
	c, _ := startThree(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	t.Cleanup(cancel)
	return c, c.registerNodes(ctx, t, region, prefix, n), ctx
}

// cli runs an admin command of the binary and returns its stdout.
func (c *e2eCluster) cli(args ...string) (string, error) { return c.cliAs(e2eAdminToken, args...) }

// cliAs is cli with token in the admin token's variable.
func (c *e2eCluster) cliAs(token string, args ...string) (string, error) {
	cmd := exec.Command(c.bin, append(args, c.cliArgs...)...)
	cmd.Env = append(os.Environ(), "MUSTER_AUTH_ADMIN_TOKEN="+token)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("%s %v: %w: %s", filepath.Base(c.bin), args, err, errb.String())
	}
	return out.String(), nil
}

// leaderWithMembers waits, through the status command, for a leader among want members.
func (c *e2eCluster) waitLeader(t testing.TB, addrs string, want int, not string) api.StatusResponse {
	var st api.StatusResponse
	testkit.WaitFor(t, 60*time.Second, fmt.Sprintf("a leader (not %q) with %d members", not, want), func() (bool, string) {
		out, err := c.cli("status", "--json", "--timeout", "5s", "--addr", addrs)
		if err != nil {
			return false, err.Error()
		}
		st = api.StatusResponse{}
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			return false, err.Error()
		}
		return st.LeaderID != "" && st.LeaderID != not && len(st.Members) == want, out
	})
	return st
}

func (c *e2eCluster) proc(id string) *proc {
	for _, p := range c.procs {
		if p.id == id {
			return p
		}
	}
	c.t.Fatalf("no member %q", id)
	return nil
}

// TestE2E_SIGKILLTheLeaderThenANewLeaderGrantsLeases runs three members as child processes,
// kills the leader with SIGKILL and checks that a new leader grants leases, never on a node
// whose lease has not expired, and that the old lease survives the failover.
func TestE2E_SIGKILLTheLeaderThenANewLeaderGrantsLeases(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three coordinator processes")
	}
	c, st := startThree(t)
	t.Logf("leader %s, term %d", st.LeaderID, st.Term)
	// Every member reports ready on /readyz once it knows the leader and has caught up.
	for _, p := range c.procs {
		waitReady(t, p.apiURL)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The edge knows one follower only: the cluster must take it to the leader.
	var follower *proc
	for _, p := range c.procs {
		if p.id != st.LeaderID {
			follower = p
			break
		}
	}
	edge, err := api.NewClient([]string{follower.apiURL}, api.WithToken(e2eEdgeToken), api.WithRetryDelay(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var nodes []api.RegisterNode
	for i := 0; i < 12; i++ {
		nodes = append(nodes, api.RegisterNode{Identity: fmt.Sprintf("node-%02d.ams", i), Version: "0.29.4"})
	}
	reg, err := edge.Register(ctx, api.RegisterRequest{Region: "ams", Edge: "edge-ams-1", Nodes: nodes})
	if err != nil {
		t.Fatal(err)
	}
	if reg.Added != len(nodes) {
		// A register whose answer was lost to a change of leader is retried, and the retry finds
		// the nodes its first attempt added: the ledger must hold all of them, waiting.
		admin, err := api.NewClient([]string{follower.apiURL}, api.WithToken(e2eAdminToken), api.WithRetryDelay(100*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		// The leader's own listing: a follower's copy may not hold the register yet.
		got, err := leaderNodes(ctx, admin, api.NodeFilter{Region: "ams", State: api.StateWaiting}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Nodes) != len(nodes) {
			t.Fatalf("register added %d of %d, and the ledger holds %d waiting", reg.Added, len(nodes), len(got.Nodes))
		}
	}
	first1, err := edge.Acquire(ctx, api.AcquireRequest{Edge: "edge-ams-1", Region: "ams", MaxNodes: 4, Wait: api.Duration(5 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if first1.Lease == nil || len(first1.Lease.Nodes) != 4 {
		t.Fatalf("first acquire: %+v", first1)
	}
	held := map[string]bool{}
	for _, n := range first1.Lease.Nodes {
		held[n] = true
	}

	// The admin CLI sees the same ledger from any member.
	out, err := c.cli("nodes", "--json", "--state", "leased", "--addr", follower.apiURL)
	if err != nil {
		t.Fatal(err)
	}
	var leased api.NodesResponse
	if err := json.Unmarshal([]byte(out), &leased); err != nil || len(leased.Nodes) != 4 {
		t.Fatalf("nodes --state leased: %v %s", err, out)
	}

	c.cliSteps(t, follower.apiURL, first1.Lease.Nodes[0])
	for _, n := range nodes {
		if !held[n.Identity] {
			c.namedAdminSteps(t, follower.apiURL, n.Identity)
			break
		}
	}

	// Leadership may have moved on a loaded machine since the cluster started: kill the member
	// that leads now.
	st = c.waitLeader(t, c.addrs(""), 3, "")
	leader := c.proc(st.LeaderID)
	killed := time.Now()
	if err := leader.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-leader.exited

	var second api.AcquireResponse
	testkit.WaitFor(t, 60*time.Second, "a lease granted by the new leader", func() (bool, string) {
		actx, acancel := context.WithTimeout(ctx, 10*time.Second)
		defer acancel()
		r, err := edge.Acquire(actx, api.AcquireRequest{Edge: "edge-ams-2", Region: "ams", MaxNodes: 4, Wait: api.Duration(2 * time.Second)})
		if err != nil {
			return false, err.Error()
		}
		second = r
		return r.Lease != nil, fmt.Sprintf("%+v", r)
	})
	failover := time.Since(killed)
	t.Logf("SIGKILL of leader %s -> next granted lease: %s (token %d -> %d)", leader.id, failover, first1.Lease.Token, second.Lease.Token)

	if second.Lease.Token <= first1.Lease.Token {
		t.Errorf("token %d of the new leader's lease is not above %d: not a fencing token", second.Lease.Token, first1.Lease.Token)
	}
	for _, n := range second.Lease.Nodes {
		if held[n] {
			t.Errorf("node %s granted again while lease %s (token %d) had not expired", n, first1.Lease.ID, first1.Lease.Token)
		}
	}
	// The first edge's lease survived the failover: it still renews under its token.
	ren, err := edge.Renew(ctx, api.RenewRequest{LeaseID: first1.Lease.ID, Token: first1.Lease.Token, Edge: "edge-ams-1", Region: "ams"})
	if err != nil {
		t.Fatalf("renew of the pre-failover lease: %v", err)
	}
	if !ren.Lease.ExpiresAt.After(first1.Lease.ExpiresAt) {
		t.Errorf("renewed expiry %s is not after %s", ren.Lease.ExpiresAt, first1.Lease.ExpiresAt)
	}
	st2 := c.waitLeader(t, c.addrs(leader.id), 3, leader.id)
	if st2.Term <= st.Term {
		t.Errorf("term %d after the failover is not above %d", st2.Term, st.Term)
	}

	// The operator removes the dead member; the two left keep a quorum of the new configuration.
	if out, err := c.cli("remove", leader.id, "--addr", c.addrs(leader.id)); err != nil || !strings.Contains(out, "member "+leader.id+" removed") {
		t.Fatalf("remove: %v %s", err, out)
	}
	c.waitLeader(t, c.addrs(leader.id), 2, leader.id)
	c.assertNoTokenLogged()
}

// assertNoTokenLogged reads every member's log for the tokens it was given.
func (c *e2eCluster) assertNoTokenLogged() {
	logs, _ := filepath.Glob(filepath.Join(c.dir, "*.log"))
	if len(logs) == 0 {
		c.t.Fatal("no member logs found")
	}
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			c.t.Fatal(err)
		}
		if !bytes.Contains(b, []byte("auth=")) {
			c.t.Errorf("%s lacks the starting line", filepath.Base(l))
		}
		for _, tok := range []string{e2eEdgeToken, e2eAdminToken, e2eReaderToken, e2eOperatorToken} {
			if bytes.Contains(b, []byte(tok)) {
				c.t.Errorf("%s contains a token", filepath.Base(l))
			}
		}
	}
}

// cliSteps drives the text commands of the admin CLI against a follower and checks what they print.
func (c *e2eCluster) cliSteps(t *testing.T, addr, leasedNode string) {
	t.Helper()
	steps := []struct {
		args []string
		want []string
	}{
		{[]string{"status"}, []string{"leader c", "MEMBER", "REGION", "ams"}},
		{[]string{"pause", "--reason", "change freeze"}, []string{"paused change freeze"}},
		{[]string{"nodes", "--region", "ams", "--state", "waiting", "--limit", "3"}, []string{"IDENTITY", "waiting", "more: --after"}},
		{[]string{"nodes", "--region", "ams", "--all"}, []string{leasedNode, "leased"}},
		{[]string{"node", leasedNode}, []string{"state", "leased", "edge-ams-1", "history:", "waiting"}},
		{[]string{"snapshot"}, []string{"snapshot ", "at index"}},
	}
	for _, s := range steps {
		out, err := c.cli(append(s.args, "--addr", addr)...)
		if err != nil {
			t.Fatalf("%v", err)
		}
		for _, w := range s.want {
			if !strings.Contains(out, w) {
				t.Errorf("muster-coordinator %v printed\n%s\nwithout %q", s.args, out, w)
			}
		}
		if s.args[0] != "pause" {
			continue
		}
		// status is the member's own view: the follower shows the pause once it applied it.
		testkit.WaitFor(t, 30*time.Second, "the follower's status to show the pause", func() (bool, string) {
			out, err := c.cli("status", "--addr", addr)
			return err == nil && strings.Contains(out, "paused yes (change freeze)"), out
		})
		if out, err := c.cli("resume", "--addr", addr); err != nil || !strings.Contains(out, "running") {
			t.Fatalf("resume: %v %s", err, out)
		}
	}
	// Refusals are errors with the reason, and a non-zero exit.
	if _, err := c.cli("node", "no-such-node", "--addr", addr); err == nil || !strings.Contains(err.Error(), "no-such-node") {
		t.Errorf("node no-such-node: %v", err)
	}
	cmd := exec.Command(c.bin, "status", "--addr", addr)
	cmd.Env = append(os.Environ(), "MUSTER_AUTH_ADMIN_TOKEN=wrong-token-0123456789")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "unauthorized") {
		t.Errorf("status with a wrong token: %v %s", err, out)
	}
}

// namedAdminSteps drives the operator verbs as named admins through a follower: a reader's ban is
// refused naming the role it needs and the reader's, an operator's ban is in the node's history
// under the operator's name, and its unban leaves the node waiting again.
func (c *e2eCluster) namedAdminSteps(t *testing.T, addr, waitingNode string) {
	t.Helper()
	if out, err := c.cliAs(e2eReaderToken, "ban", waitingNode, "--addr", addr); err == nil || !strings.Contains(err.Error(), "needs role operate; rita has role read") {
		t.Errorf("ban as a reader: %v %s; want a refusal naming the role it needs and the reader's", err, out)
	}
	if out, err := c.cliAs(e2eOperatorToken, "ban", waitingNode, "--reason", "e2e", "--addr", addr); err != nil {
		t.Fatalf("ban as an operator: %v %s", err, out)
	}
	out, err := c.cliAs(e2eReaderToken, "node", waitingNode, "--addr", addr)
	if err != nil || !strings.Contains(out, "ban by otto: e2e") {
		t.Errorf("node %s after otto's ban: %v\n%s\nwant the ban by otto in its history", waitingNode, err, out)
	}
	if out, err := c.cliAs(e2eOperatorToken, "unban", waitingNode, "--addr", addr); err != nil {
		t.Fatalf("unban as an operator: %v %s", err, out)
	}
}

// waitReady waits until the member at base answers /readyz with 200.
func waitReady(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/readyz never answered 200 (last: %v %v)", base, resp, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
