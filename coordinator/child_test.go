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
	"github.com/seed96588659/muster/coordinator/raftnode"
	"github.com/seed96588659/muster/pkg/api"
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
		RaftAdvertise: os.Getenv("MUSTER_ADVERTISE"), APIAddress: "http://" + os.Getenv("MUSTER_ID") + ".invalid",
		BootstrapPeers: peers, Timeouts: raftnode.LoopbackTimeouts(), Leases: testLeaseConfig(),
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

// child is the parent's handle on one member process.
type child struct {
	t     testing.TB
	id    string
	dir   string
	front *forwarder
	cmd   *exec.Cmd
	stdin *json.Encoder
	lines chan string
}

func startChild(t testing.TB, id, dir string, front *forwarder, env ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", "MUSTER_ID="+id, "MUSTER_DIR="+dir, "MUSTER_ADVERTISE="+front.addr())
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
	front.setTarget(addr)
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
	c.front.setTarget("")
}

type childCluster struct {
	t        testing.TB
	children []*child
}

// startChildCluster starts members c1, c2 and c3 as child processes that know each other as peers.
func startChildCluster(t testing.TB) *childCluster {
	t.Helper()
	root := t.TempDir()
	fronts := []*forwarder{newForwarder(t), newForwarder(t), newForwarder(t)}
	var peers []string
	for i, f := range fronts {
		peers = append(peers, fmt.Sprintf("c%d=%s", i+1, f.addr()))
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
	waitFor(cc.t, "a leader among the child members", func() bool {
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
	cc.onLeader(childRequest{Op: "register", Region: "eu", Edge: "edge-a", IDs: nodeIDs("n", 40)})
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
	waitFor(t, "the restarted member to converge", func() bool {
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
	front := newForwarder(t)
	env := []string{"MUSTER_MODE=writer", "MUSTER_PEERS=c1=" + front.addr(), "MUSTER_SNAPSHOT_THRESHOLD=16"}
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

	cl := &cluster{t: t, clock: newTestClock(), leases: testLeaseConfig()}
	m := &member{c: cl, id: "c1", dir: dir, front: front}
	cl.members = []*member{m}
	t.Cleanup(cl.closeAll)
	cl.start(m, false)
	cl.waitLeader()
	waitFor(t, "the log to be applied after restart", func() bool {
		_, err := m.svc.Ledger().Node(fmt.Sprintf("b%05d-%03d", last, 199))
		return err == nil
	})
	for b := 0; b <= last; b++ {
		for _, i := range []int{0, 199} {
			if _, err := m.svc.Ledger().Node(fmt.Sprintf("b%05d-%03d", b, i)); err != nil {
				t.Fatalf("acknowledged batch %d lost after kill -9: %v", b, err)
			}
		}
	}
	counts, _ := m.svc.Ledger().Counts()
	if counts["eu"]["waiting"] < (last+1)*200 {
		t.Fatalf("counts %v below the %d acknowledged nodes", counts, (last+1)*200)
	}
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
		cc.onLeader(childRequest{Op: "register", Region: region, Edge: "e", IDs: nodeIDs(region+"-", 5)})
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
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)/2].Milliseconds()), "median-ms")
	b.ReportMetric(float64(samples[len(samples)-1].Milliseconds()), "max-ms")
}
