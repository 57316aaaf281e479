// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/internal/testcluster"
	"github.com/seed96588659/muster/coordinator/raftnode"
	"github.com/seed96588659/muster/pkg/testkit"
)

// TestNew_MakesTheDataDirectoryPrivate: the data directory holds the ledger, the Raft log and
// snapshots (every node's facts, lease tokens); one that already existed as 0755 is made 0700.
func TestNew_MakesTheDataDirectoryPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	svc, err := coordinator.New(coordinator.Config{ID: "c1", DataDir: dir, RaftBind: "127.0.0.1:0", Bootstrap: true, LedgerNoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o700 {
		t.Fatalf("data directory is %v, want 0700", st.Mode().Perm())
	}
}

// TestRecoverCluster_RefusesAtOnceOnARunningMembersDirectory: recover on the data directory of a
// member that is running refuses within seconds, saying the member runs and which process it is;
// it changes nothing (the member goes on leading).
func TestRecoverCluster_RefusesAtOnceOnARunningMembersDirectory(t *testing.T) {
	c := testcluster.New(t, 1)
	m := c.StartAll()
	errc := make(chan error, 1)
	go func() {
		errc <- coordinator.RecoverCluster(coordinator.Config{ID: m.ID, DataDir: m.Dir, Timeouts: raftnode.LoopbackTimeouts()},
			[]raftnode.Peer{{ID: m.ID, Address: m.Front.Addr()}})
	}()
	err := testkit.Receive(t, errc, 3*time.Second, "recover to refuse")
	if err == nil {
		t.Fatal("recover of a running member's directory succeeded")
	}
	for _, want := range []string{m.Dir, "in use", "running", fmt.Sprintf("pid %d", os.Getpid())} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("recover error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "damaged") {
		t.Errorf("recover error %q calls the ledger damaged", err)
	}
	c.Register("eu", "still-leading")
}

// TestNew_ASecondProcessOnARunningMembersDirectoryIsToldItIsInUse: a second member started on a
// running member's data directory is refused at once with "in use" and the process, never with
// the damaged-ledger advice to move the file aside.
func TestNew_ASecondProcessOnARunningMembersDirectoryIsToldItIsInUse(t *testing.T) {
	c := testcluster.New(t, 1)
	m := c.StartAll()
	errc := make(chan error, 1)
	go func() {
		svc, err := coordinator.New(coordinator.Config{ID: m.ID, DataDir: m.Dir, RaftBind: "127.0.0.1:0", LedgerNoSync: true})
		if err == nil {
			svc.Close()
		}
		errc <- err
	}()
	err := testkit.Receive(t, errc, 3*time.Second, "the second start to be refused")
	if err == nil {
		t.Fatal("a second member started on a running member's directory")
	}
	for _, want := range []string{m.Dir, "in use", fmt.Sprintf("pid %d", os.Getpid())} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	for _, bad := range []string{"damaged", "move it aside"} {
		if strings.Contains(err.Error(), bad) {
			t.Errorf("error %q says %q of a ledger in use", err, bad)
		}
	}
	c.Register("eu", "still-leading")
}
