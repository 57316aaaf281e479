// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/internal/testcluster"
	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/coordinator/raftnode"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/pkg/testkit/proxy"
)

// Members as child processes: the test binary re-executes itself with MUSTER_CORE_CHILD set and
// runs one coordinator member, driven by JSON lines on stdin, so the parent can SIGKILL it.

const childEnv = "MUSTER_CORE_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		if err := runChild(); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type childRequest struct {
	Op     string   `json:"op"`
	Region string   `json:"region,omitempty"`
	Edge   string   `json:"edge,omitempty"`
	IDs    []string `json:"ids,omitempty"`
	Max    int      `json:"max,omitempty"`
	Lease  string   `json:"lease,omitempty"`
	Token  uint64   `json:"token,omitempty"`
}

type childResponse struct {
	Err       string     `json:"err,omitempty"`
	NotLeader bool       `json:"not_leader,omitempty"`
	Leader    bool       `json:"leader"`
	Lease     *api.Lease `json:"lease,omitempty"`
	Applied   uint64     `json:"applied"`
	Digest    string     `json:"digest,omitempty"`
}

func runChild() error {
	peers := []raftnode.Peer{}
	for _, p := range strings.Split(os.Getenv("MUSTER_PEERS"), ",") {
		if id, addr, ok := strings.Cut(p, "="); ok {
			peers = append(peers, raftnode.Peer{ID: id, Address: addr})
		}
	}
	threshold, _ := strconv.ParseUint(os.Getenv("MUSTER_SNAPSHOT_THRESHOLD"), 10, 64)
	svc, err := coordinator.New(coordinator.Config{
		ID: os.Getenv("MUSTER_ID"), DataDir: os.Getenv("MUSTER_DIR"), RaftBind: "127.0.0.1:0",
		RaftAdvertise: os.Getenv("MUSTER_ADVERTISE"),
		// No API is served; a refused loopback port (not a name to resolve) when a leader asks
		// the members for their protocol.
		APIAddress:     "http://127.0.0.1:1",
		BootstrapPeers: peers, Timeouts: raftnode.LoopbackTimeouts(), Leases: testcluster.LeaseConfig(),
		SnapshotThreshold: threshold, SnapshotInterval: 20 * time.Millisecond, TrailingLogs: threshold,
	})
	if err != nil {
		return err
	}
	fmt.Printf("bound %s\n", svc.BoundRaftAddress())
	ctx := context.Background()
	switch os.Getenv("MUSTER_MODE") {
	case "writer":
		return childWriter(ctx, svc, os.Getenv("MUSTER_SNAPSHOTS") != "")
	case "lease-writer":
		return childLeaseWriter(ctx, svc)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req childRequest
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			return err
		}
		var resp childResponse
		var err error
		switch req.Op {
		case "status":
		case "register":
			r := api.RegisterRequest{Region: req.Region, Edge: req.Edge}
			for _, id := range req.IDs {
				r.Nodes = append(r.Nodes, api.RegisterNode{Identity: id})
			}
			_, err = svc.Register(ctx, r)
		case "acquire":
			var r api.AcquireResponse
			r, err = svc.Acquire(ctx, api.AcquireRequest{Edge: req.Edge, Region: req.Region, MaxNodes: req.Max})
			resp.Lease = r.Lease
		case "renew":
			var r api.RenewResponse
			r, err = svc.Renew(ctx, api.RenewRequest{LeaseID: req.Lease, Token: req.Token, Edge: req.Edge, Region: req.Region})
			resp.Lease = &r.Lease
		default:
			err = fmt.Errorf("unknown op %q", req.Op)
		}
		if err != nil {
			resp.Err = err.Error()
			resp.NotLeader = errors.Is(err, coordinator.ErrNotLeader) || errors.Is(err, coordinator.ErrNoLeader) || errors.Is(err, coordinator.ErrNotReady)
		}
		resp.Leader = svc.IsLeader()
		resp.Applied, _, _ = svc.Ledger().AppliedIndex()
		d, _ := svc.Ledger().Digest()
		resp.Digest = fmt.Sprintf("%x", d)
		if err := out.Encode(resp); err != nil {
			return err
		}
	}
	return svc.Close()
}

// childWriter registers batches as fast as it can and prints "ack N" after batch N was committed
// and applied; with snapshots it also forces snapshots continuously.
func childWriter(ctx context.Context, svc *coordinator.Service, snapshots bool) error {
	for !svc.IsLeader() {
		time.Sleep(5 * time.Millisecond)
	}
	if snapshots {
		go func() {
			for {
				svc.Snapshot(ctx)
			}
		}()
	}
	for batch := 0; ; batch++ {
		r := api.RegisterRequest{Region: "eu", Edge: "w"}
		for i := range 200 {
			r.Nodes = append(r.Nodes, api.RegisterNode{Identity: fmt.Sprintf("b%05d-%03d", batch, i)})
		}
		if _, err := svc.Register(ctx, r); err != nil {
			return err
		}
		fmt.Printf("ack %d\n", batch)
	}
}

// leaseAck is one write the lease writer saw acknowledged.
type leaseAck struct {
	Op      string    `json:"op"`
	Batch   int       `json:"batch"`
	LeaseID string    `json:"lease_id,omitempty"`
	Token   uint64    `json:"token,omitempty"`
	Nodes   []string  `json:"nodes,omitempty"`
	Expires time.Time `json:"expires,omitempty"`
	Applied []string  `json:"applied,omitempty"`
}

// leaseBatch is the writer's batch b: four new nodes, granted in one lease, renewed, and three of
// them reported (two provisioned, one deferred), so the lease stays with the fourth.
func leaseBatch(b int) []string {
	return []string{fmt.Sprintf("L%05d-0", b), fmt.Sprintf("L%05d-1", b), fmt.Sprintf("L%05d-2", b), fmt.Sprintf("L%05d-3", b)}
}

func leaseReport(b int, ls *api.Lease) api.ReportRequest {
	ids := leaseBatch(b)
	return api.ReportRequest{LeaseID: ls.ID, Token: ls.Token, Edge: "w", Region: "eu", RequestID: fmt.Sprintf("rep-%d", b), Results: []api.NodeResult{
		{Identity: ids[0], Outcome: api.OutcomeProvisioned}, {Identity: ids[1], Outcome: api.OutcomeProvisioned}, {Identity: ids[2], Outcome: api.OutcomeDeferred},
	}}
}

// childLeaseWriter registers, grants, renews and reports as fast as it can and prints one JSON
// line per acknowledged write, after it was committed and applied.
func childLeaseWriter(ctx context.Context, svc *coordinator.Service) error {
	for !svc.IsLeader() {
		time.Sleep(5 * time.Millisecond)
	}
	out := json.NewEncoder(os.Stdout)
	for b := 0; ; b++ {
		ids := leaseBatch(b)
		reg := api.RegisterRequest{Region: "eu", Edge: "w"}
		for _, id := range ids {
			reg.Nodes = append(reg.Nodes, api.RegisterNode{Identity: id})
		}
		if _, err := svc.Register(ctx, reg); err != nil {
			return err
		}
		out.Encode(leaseAck{Op: "register", Batch: b, Nodes: ids})
		g, err := svc.Acquire(ctx, api.AcquireRequest{Edge: "w", Region: "eu", MaxNodes: 4, RequestID: fmt.Sprintf("acq-%d", b)})
		if err != nil {
			return err
		}
		if g.Lease == nil || !slices.Equal(g.Lease.Nodes, ids) {
			return fmt.Errorf("batch %d: granted %+v, want %v", b, g.Lease, ids)
		}
		out.Encode(leaseAck{Op: "grant", Batch: b, LeaseID: g.Lease.ID, Token: g.Lease.Token, Nodes: g.Lease.Nodes})
		r, err := svc.Renew(ctx, api.RenewRequest{LeaseID: g.Lease.ID, Token: g.Lease.Token, Edge: "w", Region: "eu"})
		if err != nil {
			return err
		}
		out.Encode(leaseAck{Op: "renew", Batch: b, LeaseID: r.Lease.ID, Token: r.Lease.Token, Expires: r.Lease.ExpiresAt})
		rep, err := svc.Report(ctx, leaseReport(b, g.Lease))
		if err != nil {
			return err
		}
		out.Encode(leaseAck{Op: "report", Batch: b, LeaseID: g.Lease.ID, Token: g.Lease.Token, Applied: rep.Applied})
	}
}

// child is the parent's handle on one member process.
type child struct {
	t     testing.TB
	id    string
	dir   string
	front *proxy.Proxy
	cmd   *exec.Cmd
	stdin *json.Encoder
	lines chan string
}

func startChild(t testing.TB, id, dir string, front *proxy.Proxy, env ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", "MUSTER_ID="+id, "MUSTER_DIR="+dir, "MUSTER_ADVERTISE="+front.Addr())
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{t: t, id: id, dir: dir, front: front, cmd: cmd, stdin: json.NewEncoder(stdin), lines: make(chan string, 1024)}
	t.Cleanup(c.kill)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	first := c.line(30 * time.Second)
	addr, ok := strings.CutPrefix(first, "bound ")
	if !ok {
		t.Fatalf("child %s: first line %q", id, first)
	}
	front.SetTarget(addr)
	return c
}

func (c *child) line(timeout time.Duration) string {
	c.t.Helper()
	select {
	case l, ok := <-c.lines:
		if !ok {
			c.t.Fatalf("child %s exited", c.id)
		}
		return l
	case <-time.After(timeout):
		c.t.Fatalf("child %s: no output in %s", c.id, timeout)
	}
	return ""
}

func (c *child) call(req childRequest) childResponse {
	c.t.Helper()
	if err := c.stdin.Encode(req); err != nil {
		c.t.Fatalf("child %s: %v", c.id, err)
	}
	var resp childResponse
	if err := json.Unmarshal([]byte(c.line(60*time.Second)), &resp); err != nil {
		c.t.Fatalf("child %s: %v", c.id, err)
	}
	return resp
}

// kill sends SIGKILL: no shutdown code runs.
func (c *child) kill() {
	if c.cmd.ProcessState != nil {
		return
	}
	c.cmd.Process.Signal(syscall.SIGKILL)
	c.cmd.Wait()
	c.front.SetTarget("")
}

type childCluster struct {
	t        testing.TB
	children []*child
}

// startChildCluster starts members c1, c2 and c3 as child processes that know each other as peers.
func startChildCluster(t testing.TB) *childCluster {
	t.Helper()
	root := t.TempDir()
	fronts := []*proxy.Proxy{testcluster.NewFront(t), testcluster.NewFront(t), testcluster.NewFront(t)}
	var peers []string
	for i, f := range fronts {
		peers = append(peers, fmt.Sprintf("c%d=%s", i+1, f.Addr()))
	}
	cc := &childCluster{t: t}
	for i, f := range fronts {
		id := fmt.Sprintf("c%d", i+1)
		cc.children = append(cc.children, startChild(t, id, root+"/"+id, f, "MUSTER_PEERS="+strings.Join(peers, ",")))
	}
	return cc
}

func (cc *childCluster) leader() *child {
	cc.t.Helper()
	var l *child
	testkit.WaitFor(cc.t, testcluster.WaitLimit, "a leader among the child members", func() bool {
		n := 0
		for _, c := range cc.children {
			if c.cmd.ProcessState == nil && c.call(childRequest{Op: "status"}).Leader {
				l = c
				n++
			}
		}
		return n == 1
	})
	return l
}

// onLeader sends req to the leader, following leadership changes.
func (cc *childCluster) onLeader(req childRequest) childResponse {
	cc.t.Helper()
	for range 20 {
		r := cc.leader().call(req)
		if !r.NotLeader {
			if r.Err != "" {
				cc.t.Fatalf("%s: %s", req.Op, r.Err)
			}
			return r
		}
	}
	cc.t.Fatalf("%s: leadership kept moving", req.Op)
	return childResponse{}
}

func TestChildCluster_SIGKILLLeaderThenNewLeaderGrants(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	cc := startChildCluster(t)
	cc.onLeader(childRequest{Op: "register", Region: "eu", Edge: "edge-a", IDs: testcluster.NodeIDs("n", 40)})
	held := cc.onLeader(childRequest{Op: "acquire", Region: "eu", Edge: "edge-a", Max: 10}).Lease
	if held == nil || len(held.Nodes) != 10 {
		t.Fatalf("first lease = %+v", held)
	}

	old := cc.leader()
	old.kill()
	next := cc.onLeader(childRequest{Op: "acquire", Region: "eu", Edge: "edge-b", Max: 100}).Lease
	if next == nil || len(next.Nodes) != 30 || next.Token <= held.Token {
		t.Fatalf("lease after SIGKILL of the leader = %+v", next)
	}
	for _, id := range next.Nodes {
		for _, h := range held.Nodes {
			if id == h {
				t.Fatalf("node %s granted twice while its lease is unexpired", id)
			}
		}
	}
	renewed := cc.onLeader(childRequest{Op: "renew", Lease: held.ID, Token: held.Token, Edge: "edge-a", Region: "eu"}).Lease
	if renewed == nil || renewed.Token != held.Token {
		t.Fatalf("renew of the surviving lease = %+v", renewed)
	}

	// The killed member restarts from its files and catches up.
	for i, c := range cc.children {
		if c == old {
			cc.children[i] = startChild(t, c.id, c.dir, c.front)
		}
	}
	testkit.WaitFor(t, testcluster.WaitLimit, "the restarted member to converge", func() bool {
		var first childResponse
		for i, c := range cc.children {
			r := c.call(childRequest{Op: "status"})
			if i == 0 {
				first = r
			} else if r.Digest != first.Digest || r.Applied != first.Applied {
				return false
			}
		}
		return true
	})
}

// crashAndCheck runs a writer member, SIGKILLs it after some acknowledged batches, reopens its
// files in this process and checks that every acknowledged batch is in the ledger.
func crashAndCheck(t *testing.T, snapshots bool, acks int) {
	dir := t.TempDir()
	front := testcluster.NewFront(t)
	env := []string{"MUSTER_MODE=writer", "MUSTER_PEERS=c1=" + front.Addr(), "MUSTER_SNAPSHOT_THRESHOLD=16"}
	if snapshots {
		env = append(env, "MUSTER_SNAPSHOTS=1")
	}
	c := startChild(t, "c1", dir, front, env...)
	last := -1
	for last < acks {
		l := c.line(60 * time.Second)
		n, err := strconv.Atoi(strings.TrimPrefix(l, "ack "))
		if err != nil {
			t.Fatalf("writer said %q", l)
		}
		last = n
	}
	c.kill() // mid-apply (and mid-snapshot when enabled): the writer never pauses
	// Drain what the writer acknowledged before it died.
	for l := range c.lines {
		if n, err := strconv.Atoi(strings.TrimPrefix(l, "ack ")); err == nil {
			last = n
		}
	}

	if snapshots {
		entries, err := os.ReadDir(dir + "/snapshots")
		if err != nil || len(entries) == 0 {
			t.Fatalf("the writer took no snapshot before it was killed (%v)", err)
		}
	}

	m := reopen(testcluster.New(t, 1), dir, front)
	testkit.WaitFor(t, testcluster.WaitLimit, "the log to be applied after restart", func() bool {
		_, err := m.Svc.Ledger().Node(fmt.Sprintf("b%05d-%03d", last, 199))
		return err == nil
	})
	for b := 0; b <= last; b++ {
		for _, i := range []int{0, 199} {
			if _, err := m.Svc.Ledger().Node(fmt.Sprintf("b%05d-%03d", b, i)); err != nil {
				t.Fatalf("acknowledged batch %d lost after kill -9: %v", b, err)
			}
		}
	}
	counts, _ := m.Svc.Ledger().Counts()
	if counts["eu"]["waiting"] < (last+1)*200 {
		t.Fatalf("counts %v below the %d acknowledged nodes", counts, (last+1)*200)
	}
}

// reopen starts c's one member in this process from dir, the files of the child member c1 that
// was killed behind front, and waits for it to lead.
func reopen(c *testcluster.Cluster, dir string, front *proxy.Proxy) *testcluster.Member {
	c.T().Helper()
	m := c.Members[0]
	m.Dir, m.Front = dir, front
	c.Start(m, false)
	c.WaitLeader()
	return m
}

func TestCrash_KillDuringApplyLosesNoAcknowledgedWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for _, acks := range []int{3, 17, 40} {
		t.Run(strconv.Itoa(acks), func(t *testing.T) { crashAndCheck(t, false, acks) })
	}
}

func TestCrash_KillDuringSnapshotLosesNoAcknowledgedWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for _, acks := range []int{5, 23, 41} {
		t.Run(strconv.Itoa(acks), func(t *testing.T) { crashAndCheck(t, true, acks) })
	}
}

// BenchmarkChildCluster_SIGKILLToNextGrant measures, per op, the time from SIGKILL of the leader
// process to the first lease granted by its successor; the killed member restarts from its files
// before the next op. Raft timeouts: raftnode.LoopbackTimeouts.
func BenchmarkChildCluster_SIGKILLToNextGrant(b *testing.B) {
	cc := startChildCluster(b)
	var samples []time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		region := fmt.Sprintf("r%d", i)
		cc.onLeader(childRequest{Op: "register", Region: region, Edge: "e", IDs: testcluster.NodeIDs(region+"-", 5)})
		old := cc.leader()
		b.StartTimer()
		start := time.Now()
		old.kill()
	poll:
		for {
			for _, c := range cc.children {
				if c == old {
					continue
				}
				if r := c.call(childRequest{Op: "acquire", Region: region, Edge: "e", Max: 1}); r.Lease != nil {
					break poll
				}
			}
			time.Sleep(time.Millisecond) // poll interval of the measuring client
		}
		samples = append(samples, time.Since(start))
		b.StopTimer()
		for j, c := range cc.children {
			if c == old {
				cc.children[j] = startChild(b, c.id, c.dir, c.front)
			}
		}
		b.StartTimer()
	}
	b.StopTimer()
	reportMedianMax(b, samples)
}

// TestCrash_KillDuringLeaseWritesLosesNoneAndAppliesNoneTwice: grants, renewals and reports are
// in flight when the member is killed with SIGKILL. After the restart every acknowledged write
// is there exactly once: each acknowledged grant's nodes carry exactly one grant under its token,
// each acknowledged renewal's expiry stands, each acknowledged report's nodes left the lease
// exactly once, and a retry of the last acknowledged report is answered with its outcomes and
// changes nothing.
func TestCrash_KillDuringLeaseWritesLosesNoneAndAppliesNoneTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for _, acks := range []int{7, 41, 90} {
		t.Run(strconv.Itoa(acks), func(t *testing.T) {
			dir := t.TempDir()
			front := testcluster.NewFront(t)
			c := startChild(t, "c1", dir, front, "MUSTER_MODE=lease-writer", "MUSTER_PEERS=c1="+front.Addr(), "MUSTER_SNAPSHOT_THRESHOLD=64")
			var acked []leaseAck
			read := func(l string) {
				var a leaseAck
				if err := json.Unmarshal([]byte(l), &a); err != nil {
					t.Fatalf("writer said %q", l)
				}
				acked = append(acked, a)
			}
			for len(acked) < acks {
				read(c.line(60 * time.Second))
			}
			c.kill() // mid-write: the writer never pauses
			for l := range c.lines {
				read(l)
			}

			cl := testcluster.New(t, 1)
			m := reopen(cl, dir, front)
			l := m.Svc.Ledger()
			last := acked[len(acked)-1]
			testkit.WaitFor(t, testcluster.WaitLimit, "the log to be applied after restart", func() bool {
				_, err := l.Node(leaseBatch(last.Batch)[0])
				return err == nil
			})
			granted := map[int]leaseAck{}
			var lastReport *leaseAck
			for _, a := range acked {
				ids := leaseBatch(a.Batch)
				switch a.Op {
				case "register":
					for _, id := range ids {
						if _, err := l.Node(id); err != nil {
							t.Fatalf("acknowledged registration of %s lost: %v", id, err)
						}
					}
				case "grant":
					granted[a.Batch] = a
					for _, id := range ids {
						n, _ := l.Node(id)
						if got := countTransitions(n, a.Token, api.StateLeased); got != 1 {
							t.Fatalf("node %s: %d grants under acknowledged token %d, want exactly 1", id, got, a.Token)
						}
					}
				case "renew":
					ls, err := l.Lease(a.LeaseID)
					if err != nil || ls.ExpiresAt.Before(a.Expires) {
						t.Fatalf("acknowledged renewal of %s (expires %s) lost: %+v %v", a.LeaseID, a.Expires, ls, err)
					}
				case "report":
					a := a
					lastReport = &a
					want := []api.NodeState{api.StateProvisioned, api.StateProvisioned, api.StateDeferred}
					for i, id := range ids[:3] {
						n, _ := l.Node(id)
						if n.State != want[i] || countTransitionsFrom(n, a.Token) != 1 {
							t.Fatalf("node %s after an acknowledged report: %s with %d transitions out of lease %d, want %s once", id, n.State, countTransitionsFrom(n, a.Token), a.Token, want[i])
						}
					}
					if n, _ := l.Node(ids[3]); n.State != api.StateLeased || n.LeaseToken != a.Token {
						t.Fatalf("unreported node %s: %s under %d", ids[3], n.State, n.LeaseToken)
					}
				}
			}
			if lastReport == nil {
				t.Fatal("no report was acknowledged before the kill")
			}
			g := granted[lastReport.Batch]
			var rep api.ReportResponse
			cl.OnLeader("report again", func(m *testcluster.Member) error {
				var err error
				rep, err = m.Svc.Report(context.Background(), leaseReport(lastReport.Batch, &api.Lease{ID: g.LeaseID, Token: g.Token}))
				return err
			})
			if !slices.Equal(rep.Applied, lastReport.Applied) {
				t.Fatalf("retried report answered %v, first answer was %v", rep.Applied, lastReport.Applied)
			}
			for _, id := range leaseBatch(lastReport.Batch)[:3] {
				if n, _ := l.Node(id); countTransitionsFrom(n, g.Token) != 1 {
					t.Fatalf("node %s: the retried report was applied again", id)
				}
			}
			t.Logf("%d acknowledged writes checked, last %s of batch %d", len(acked), last.Op, last.Batch)
		})
	}
}

// countTransitions counts the transitions of n into state under lease token.
func countTransitions(n *ledger.Node, token uint64, state api.NodeState) int {
	k := 0
	for _, tr := range n.History {
		if tr.LeaseToken == token && tr.To == state {
			k++
		}
	}
	return k
}

// countTransitionsFrom counts the transitions of n out of the leased state under lease token.
func countTransitionsFrom(n *ledger.Node, token uint64) int {
	k := 0
	for _, tr := range n.History {
		if tr.LeaseToken == token && tr.From == api.StateLeased {
			k++
		}
	}
	return k
}
