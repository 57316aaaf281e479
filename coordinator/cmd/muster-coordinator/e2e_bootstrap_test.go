// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// expectArgs is how deploy/kubernetes/coordinator.yaml starts every member (with --join of all three).
func expectArgs() []string { return []string{"--bootstrap-expect", "3"} }

// startExpectThree starts c1, c2 and c3 at once, each with --bootstrap-expect 3 and --join of
// all three, as deploy/kubernetes runs them, and returns the cluster once it is one (its id).
func startExpectThree(t *testing.T) (*e2eCluster, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts three coordinator processes")
	}
	c := &e2eCluster{t: t, bin: buildBinary(t), dir: t.TempDir(), serveArgs: expectArgs()}
	t.Cleanup(c.stopAll)
	for _, id := range []string{"c1", "c2", "c3"} {
		c.procs = append(c.procs, &proc{id: id, apiURL: c.freeAPIURL(), raft: fmt.Sprintf("127.0.0.1:%d", testkit.StablePort(t))})
	}
	for _, p := range c.procs {
		c.launch(p, false, c.addrs(""))
	}
	return c, c.waitOneCluster(t, "")
}

// memberStatus is member p's own view.
func memberStatus(ctx context.Context, p *proc) (api.StatusResponse, error) {
	cl, err := api.NewClient([]string{p.apiURL}, api.WithToken(e2eAdminToken), api.WithAttempts(1))
	if err != nil {
		return api.StatusResponse{}, err
	}
	sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	return cl.StatusOf(sctx, p.apiURL)
}

// waitOneCluster waits until every member of c sees the same leader, all of them voters, and
// the same cluster id (want, unless empty), and returns that id.
func (c *e2eCluster) waitOneCluster(t *testing.T, want string) string {
	t.Helper()
	var id string
	testkit.WaitFor(t, 60*time.Second, "one cluster of three voters", func() (bool, string) {
		var seen []string
		leaders, ids := map[string]bool{}, map[string]bool{}
		for _, p := range c.procs {
			st, err := memberStatus(t.Context(), p)
			if err != nil {
				return false, fmt.Sprintf("%s: %v", p.id, err)
			}
			voters := 0
			for _, m := range st.Members {
				if m.Voter {
					voters++
				}
			}
			seen = append(seen, fmt.Sprintf("%s: leader %q, %d members (%d voters), cluster %q", p.id, st.LeaderID, len(st.Members), voters, st.ClusterID))
			if st.LeaderID == "" || len(st.Members) != 3 || voters != 3 || st.ClusterID == "" {
				return false, strings.Join(seen, "; ")
			}
			leaders[st.LeaderID], ids[st.ClusterID] = true, true
			id = st.ClusterID
		}
		ok := len(leaders) == 1 && len(ids) == 1 && (want == "" || id == want)
		return ok, strings.Join(seen, "; ")
	})
	return id
}

// wipe SIGKILLs p and deletes its data directory: a pod whose volume is lost.
func (c *e2eCluster) wipe(t *testing.T, p *proc) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	if err := os.RemoveAll(filepath.Join(c.dir, p.id)); err != nil {
		t.Fatal(err)
	}
}

// waitPromoted waits until p, started without Raft state, says the leader took it in as a
// non-voter and then promoted it.
func (c *e2eCluster) waitPromoted(t *testing.T, p *proc) {
	t.Helper()
	testkit.WaitFor(t, 30*time.Second, p.id+" to be taken in as a learner and promoted", func() (bool, string) {
		log := logOf(p)
		return strings.Contains(log, "taken in as a non-voter") && strings.Contains(log, "promoted to voter"), log
	})
}

// logOf is the log of p's current run.
func logOf(p *proc) string {
	b, _ := os.ReadFile(p.logPath)
	return string(b)
}

// clusterNamed finds the id a member named a cluster with in its log.
var clusterNamed = regexp.MustCompile(`msg="cluster named".* cluster_id=([0-9a-f]+)`)

// TestE2E_BootstrapExpect_ThreeMembersFormOneCluster: three members started together, each with
// bootstrap_expect 3 and join of all three, form one cluster: every one a voter, one leader, one
// cluster id, and each says it bootstrapped the same three.
func TestE2E_BootstrapExpect_ThreeMembersFormOneCluster(t *testing.T) {
	c, id := startExpectThree(t)
	named := 0
	for _, p := range c.procs {
		if clusterNamed.MatchString(logOf(p)) {
			named++
		}
	}
	if named != 1 {
		t.Fatalf("%d members named a cluster (cluster %s), want one", named, id)
	}
}

// TestE2E_BootstrapExpect_WipedMemberRejoins: the member the old manifest bootstrapped (c1),
// restarted with an empty data directory while the other two run, joins them as a learner and is
// promoted, and never leads a cluster of its own. The old manifest's --bootstrap does make a
// second cluster in that case, shown first.
func TestE2E_BootstrapExpect_WipedMemberRejoins(t *testing.T) {
	c, id := startExpectThree(t)
	c1, c2, c3 := c.procs[0], c.procs[1], c.procs[2]

	// The old manifest: member 0 with --bootstrap. c2 and c3 are paused while it starts, so
	// their heartbeats to its old address do not race its first election.
	c.wipe(t, c1)
	for _, p := range []*proc{c2, c3} {
		if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
	}
	c.serveArgs = nil
	c.launch(c1, true, "")
	c.serveArgs = expectArgs()
	testkit.WaitFor(t, 30*time.Second, "c1 with --bootstrap and an empty data directory to name a cluster", func() (bool, string) {
		m := clusterNamed.FindStringSubmatch(logOf(c1))
		return m != nil, logOf(c1)
	})
	second := clusterNamed.FindStringSubmatch(logOf(c1))[1]
	if second == id {
		t.Fatalf("c1 bootstrapped alone into cluster %s, the cluster it was in", id)
	}
	t.Logf("with --bootstrap and an empty data directory, c1 leads a second cluster %s beside %s", second, id)
	c.wipe(t, c1)
	for _, p := range []*proc{c2, c3} {
		if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
	}

	// The manifest now: the same flags on every member.
	c.launch(c1, false, c.addrs(""))
	c.waitPromoted(t, c1)
	c.waitOneCluster(t, id)
	if log := logOf(c1); clusterNamed.MatchString(log) || strings.Contains(log, "bootstrapping a new cluster") {
		t.Fatalf("c1 restarted empty bootstrapped:\n%s", log)
	}
}

// TestE2E_BootstrapExpect_WipedMemberWaitsForItsPeers: the same member restarted empty while the
// other two are down does not bootstrap: it waits, and joins them once they are back.
func TestE2E_BootstrapExpect_WipedMemberWaitsForItsPeers(t *testing.T) {
	c, id := startExpectThree(t)
	c1, c2, c3 := c.procs[0], c.procs[1], c.procs[2]
	c.wipe(t, c1)
	for _, p := range []*proc{c2, c3} {
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		<-p.exited
	}
	c.launch(c1, false, c.addrs(""))
	testkit.WaitFor(t, 30*time.Second, "c1 to say it waits for its peers", func() (bool, string) {
		log := logOf(c1)
		return strings.Contains(log, "waiting for members to bootstrap with") && strings.Contains(log, "heard=1"), log
	})
	st, err := memberStatus(t.Context(), c1)
	if err != nil {
		t.Fatal(err)
	}
	if st.LeaderID != "" || len(st.Members) != 0 || st.ClusterID != "" || st.LastIndex != 0 {
		t.Fatalf("c1 alone, restarted empty, is in a cluster: %+v", st)
	}
	for _, p := range []*proc{c2, c3} {
		c.launch(p, false, c.addrs(""))
	}
	c.waitPromoted(t, c1)
	c.waitOneCluster(t, id)
	log := logOf(c1)
	if clusterNamed.MatchString(log) || strings.Contains(log, "bootstrapping a new cluster") {
		t.Fatalf("c1 restarted empty bootstrapped:\n%s", log)
	}
	// Once per change of what it sees, not every second.
	if n := strings.Count(log, "waiting for members to bootstrap with"); n > 3 {
		t.Errorf("c1 logged that it waits %d times:\n%s", n, log)
	}
}

// TestE2E_MemberOfAnotherClusterRefusesToStart: a member whose data directory belongs to cluster
// B, started with join targets of cluster A, refuses to start and names both clusters and its
// data directory. Its own configuration holds it, so it never asks A's leader to join.
func TestE2E_MemberOfAnotherClusterRefusesToStart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two coordinator processes")
	}
	bin := buildBinary(t)
	a := &e2eCluster{t: t, bin: bin, dir: t.TempDir()}
	t.Cleanup(a.stopAll)
	b := &e2eCluster{t: t, bin: bin, dir: t.TempDir()}
	t.Cleanup(b.stopAll)
	a1 := a.start("c1", true, "")
	c3 := b.start("c3", true, "")
	named := func(p *proc) string {
		var id string
		testkit.WaitFor(t, 30*time.Second, p.id+" to name its cluster", func() (bool, string) {
			st, err := memberStatus(t.Context(), p)
			id = st.ClusterID
			return err == nil && st.LeaderID == p.id && id != "", fmt.Sprintf("%+v %v", st, err)
		})
		return id
	}
	idA, idB := named(a1), named(c3)
	if err := c3.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-c3.exited

	b.launch(c3, false, a1.apiURL)
	select {
	case <-c3.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("c3 with cluster %s's data directory runs beside cluster %s:\n%s", idB, idA, logOf(c3))
	}
	log := logOf(c3)
	t.Logf("c3 exited: %s", log[strings.LastIndex(strings.TrimSpace(log), "\n")+1:])
	if code := c3.cmd.ProcessState.ExitCode(); code == 0 {
		t.Errorf("c3 exited 0:\n%s", log)
	}
	for _, want := range []string{idA, idB, filepath.Join(b.dir, "c3")} {
		if !strings.Contains(log, want) {
			t.Errorf("the refusal does not name %s:\n%s", want, log)
		}
	}
}
