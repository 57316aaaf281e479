// SPDX-License-Identifier: Apache-2.0

package coordproc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/gobuild"
	"github.com/seed96588659/muster/sandbox/stack/coordproc"
)

const (
	adminToken = "coordproc-admin-token-0123456789"
	edgeToken  = "coordproc-edge-token-0123456789"
	boundToken = "coordproc-bound-token-0123456789"
)

// bin is muster-coordinator, built once for the package.
var bin string

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "coordproc-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin = filepath.Join(dir, "muster-coordinator")
	if err := gobuild.Build(context.Background(), filepath.Join("..", "..", "..", "coordinator"), "-o", bin, "./cmd/muster-coordinator"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// pidLog records every process id the members started with.
type pidLog struct {
	mu   sync.Mutex
	pids map[int]string
}

func (p *pidLog) record(id string, pid int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pids == nil {
		p.pids = map[int]string{}
	}
	p.pids[pid] = id
}

// assertGone fails for every recorded process, or process group, that still exists.
func (p *pidLog) assertGone(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for pid, id := range p.pids {
		for _, target := range []int{pid, -pid} {
			if err := syscall.Kill(target, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("member %s: kill(%d, 0) = %v: the process or its group is left behind", id, target, err)
			}
		}
	}
}

func (p *pidLog) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pids)
}

// processes skips the test under -short (it starts what); otherwise it is the spec of a cluster of
// size members of bin, in a fresh directory, with the package's admin and edge tokens, whose
// processes pids records.
func processes(t *testing.T, what string, size int, pids *pidLog) coordproc.Spec {
	t.Helper()
	if testing.Short() {
		t.Skip("starts " + what)
	}
	return coordproc.Spec{
		Bin: bin, Dir: t.TempDir(), Size: size, Auth: coordproc.Auth{AdminToken: adminToken, EdgeTokens: []string{edgeToken}},
		OnStart: pids.record,
	}
}

func TestCluster_ElectsAnotherLeaderAfterAKillRestartsTheMemberAndLeavesNoProcess(t *testing.T) {
	var pids pidLog
	spec := processes(t, "three coordinator processes", 3, &pids)
	spec.Auth.Edges = []string{"edge-ams-1@ams=" + boundToken}
	spec.Lease = coordproc.Lease{TTL: 7 * time.Second, MaxWait: 2 * time.Second}
	spec.ProcessGroup, spec.JoinAfterFirstLeads = true, true
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, err := coordproc.Start(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = c.Stop()
		}
		if t.Failed() {
			t.Log(c.Logs(4000))
		}
	})
	if got := len(c.Members()); got != 3 {
		t.Fatalf("%d members, want 3", got)
	}
	for _, m := range c.Members() {
		b, err := os.ReadFile(m.LogPath)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "lease_ttl=7s") {
			t.Errorf("member %s did not start with the Spec's lease TTL; its log:\n%s", m.ID, b)
		}
	}

	// The tokens reached the members: the unbound one opens the edge API for any region, the
	// bound one for its own edge and region only.
	register := func(token, edge, region string) error {
		cl, err := api.NewClient(c.URLs(), api.WithToken(token))
		if err != nil {
			t.Fatal(err)
		}
		_, err = cl.Register(ctx, api.RegisterRequest{Region: region, Edge: edge,
			Nodes: []api.RegisterNode{{Identity: "n1." + region + ".example.net"}}})
		return err
	}
	if err := register(edgeToken, "any-edge", "fra"); err != nil {
		t.Errorf("the unbound edge token was refused: %v", err)
	}
	if err := register(boundToken, "edge-ams-1", "ams"); err != nil {
		t.Errorf("the bound edge token was refused for its own edge and region: %v", err)
	}
	if err := register(boundToken, "edge-ams-1", "fra"); err == nil {
		t.Error("the token bound to ams opened the edge API for fra")
	}

	old, st, err := c.WaitLeader(ctx, 3, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Kill(); err != nil {
		t.Fatal(err)
	}
	if old.Running() {
		t.Fatalf("member %s runs after Kill", old.ID)
	}
	next, st2, err := c.WaitLeader(ctx, 3, old.ID)
	if err != nil {
		t.Fatal(err)
	}
	if next.ID == old.ID || st2.LeaderID != next.ID || st2.Term <= st.Term {
		t.Fatalf("after %s (term %d) was killed: leader %s, status leader %q in term %d", old.ID, st.Term, next.ID, st2.LeaderID, st2.Term)
	}
	if err := next.Restart(ctx); err == nil {
		t.Errorf("Restart of the running member %s succeeded", next.ID)
	}
	if err := old.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if !old.Running() || pids.count() != 4 {
		t.Fatalf("after the restart of %s: running %v, %d processes started, want 4", old.ID, old.Running(), pids.count())
	}
	if _, _, err := c.WaitLeader(ctx, 3, ""); err != nil {
		t.Fatal(err)
	}

	stopped = true
	if err := c.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	for _, m := range c.Members() {
		if m.Running() {
			t.Errorf("member %s runs after Stop", m.ID)
		}
	}
	pids.assertGone(t)
}

func TestStart_AMemberThatCannotStartIsNamedAndNothingIsLeft(t *testing.T) {
	var pids pidLog
	spec := processes(t, "coordinator processes", 3, &pids)
	spec.LogLevel, spec.ProcessGroup = "loud", true
	_, err := coordproc.Start(context.Background(), spec)
	if err == nil {
		t.Fatal("a cluster started with --log-level loud")
	}
	for _, want := range []string{"member c1", "exited at start", "log.level"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	// A member that exits at start is tried again on fresh ports, as a taken port would need.
	if n := pids.count(); n != 3 {
		t.Errorf("c1 was started %d times, want 3", n)
	}
	pids.assertGone(t)
}

func TestMember_StopKillsAMemberThatIgnoresSIGTERM(t *testing.T) {
	var pids pidLog
	spec := processes(t, "a coordinator process", 1, &pids)
	spec.StopGrace = time.Second
	c, err := coordproc.Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	m := c.Members()[0]
	// A stopped process cannot act on SIGTERM; SIGKILL still ends it.
	if err := syscall.Kill(m.PID(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	err = c.Stop()
	if err == nil || !strings.Contains(err.Error(), "member c1") || !strings.Contains(err.Error(), "was killed") {
		t.Fatalf("stop of a member ignoring SIGTERM: %v", err)
	}
	if m.Running() {
		t.Fatal("the member runs after Stop")
	}
	pids.assertGone(t)
}

func TestStart_RefusesASpecItCannotRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec coordproc.Spec
		want string
	}{
		{"no binary", coordproc.Spec{Dir: "d", Size: 1, Auth: coordproc.Auth{AdminToken: "a"}}, "Spec.Bin"},
		{"no dir", coordproc.Spec{Bin: "b", Size: 1, Auth: coordproc.Auth{AdminToken: "a"}}, "Spec.Dir"},
		{"no member", coordproc.Spec{Bin: "b", Dir: "d", Auth: coordproc.Auth{AdminToken: "a"}}, "Spec.Size is 0"},
		{"no admin token", coordproc.Spec{Bin: "b", Dir: "d", Size: 1}, "AdminToken"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := coordproc.Start(context.Background(), tc.spec)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Start(%+v) = %v, want an error naming %s", tc.spec, err, tc.want)
			}
		})
	}
}
