// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/seed96588659/muster/coordinator/raftnode"
	bolt "go.etcd.io/bbolt"
)

// forceProtocol writes cluster protocol v into l's meta directly, as a leader of a newer build
// would have raised it: the "newer" ledger of a test, past every check of this build.
func forceProtocol(t testing.TB, l *Ledger, v int) {
	t.Helper()
	l.mu.RLock()
	defer l.mu.RUnlock()
	if err := l.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keyProtocol, putUint(uint64(v)))
	}); err != nil {
		t.Fatal(err)
	}
}

// newerHarness is the ledger of a cluster that runs a protocol above this build's, with a few
// entries more than a member that stayed behind.
func newerHarness(t testing.TB) *harness {
	t.Helper()
	h := newHarness(t)
	h.register(t0, "eu", "a", "b")
	h.grant(t0, "edge-a", "eu", 1)
	forceProtocol(t, h.l, Protocol+1)
	return h
}

func tooNewText() string {
	return fmt.Sprintf("cluster protocol %d needs a newer muster-coordinator; this one applies up to %d", Protocol+1, Protocol)
}

// TestRestore_SnapshotOfANewerProtocolIsRefused: a snapshot of a cluster that runs a protocol
// above this build's holds state this build would go on applying by older rules; the restore is
// refused with the log entry's message and the ledger stays as it was.
func TestRestore_SnapshotOfANewerProtocolIsRefused(t *testing.T) {
	snap := persist(t, newerHarness(t).l)
	h := newHarness(t)
	h.register(t0, "eu", "x")
	before := digest(t, h.l)
	idx, _, _ := h.l.AppliedIndex()

	err := h.l.FSM().Restore(io.NopCloser(bytes.NewReader(snap)))
	if err == nil || !strings.Contains(err.Error(), tooNewText()) {
		t.Fatalf("restore of a protocol %d snapshot: %v, want it refused with %q", Protocol+1, err, tooNewText())
	}
	if !bytes.Equal(before, digest(t, h.l)) {
		t.Fatal("a refused restore changed the ledger")
	}
	if got, _, _ := h.l.AppliedIndex(); got != idx {
		t.Fatalf("applied index %d after a refused restore, want %d", got, idx)
	}
	if _, err := os.Stat(h.l.Path() + ".restore"); !os.IsNotExist(err) {
		t.Fatalf("the refused snapshot's file is left behind: %v", err)
	}
	// The ledger goes on as before.
	h.register(t0, "eu", "y")
	if n := h.node("y"); n == nil {
		t.Fatal("the ledger no longer applies after a refused restore")
	}
}

// TestOpen_LedgerOfANewerProtocolIsRefused: a ledger file a newer build raised above this build's
// protocol is not opened (a member downgraded in place would apply later entries by older rules);
// the error names both protocols and the file is left exactly as it was.
func TestOpen_LedgerOfANewerProtocolIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	forceProtocol(t, l, Protocol+1)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	sum := fileSum(t, path)

	l, err = Open(path, Options{})
	if err == nil {
		l.Close()
		t.Fatalf("opened a ledger of cluster protocol %d with a build of %d", Protocol+1, Protocol)
	}
	if !strings.Contains(err.Error(), tooNewText()) || !strings.Contains(err.Error(), path) {
		t.Fatalf("open refused with %q, want the file and %q", err, tooNewText())
	}
	if fileSum(t, path) != sum {
		t.Fatal("a refused open changed the ledger file")
	}
}

func fileSum(t testing.TB, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestRestore_HaltedMemberCaughtUpBySnapshotDoesNotRunOn: a member halts at the entry raising the
// protocol above its build's and stays down while the cluster compacts its log past that entry.
// At its next start raft restores the newest snapshot instead of replaying the entry
// (raftnode's catch-up; a leader's InstallSnapshot restores the same way): the start is refused
// with the same message, and the member's ledger is what it was when it halted.
func TestRestore_HaltedMemberCaughtUpBySnapshotDoesNotRunOn(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a")
	h.applyHalting("the raise above this build", h.entry(&SetProtocol{Version: Protocol + 1}))
	before := digest(t, h.l)

	// The cluster went on and compacted; its snapshot reaches the member's snapshot store.
	dir := t.TempDir()
	store, err := raft.NewFileSnapshotStore(dir, 2, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	leader := newerHarness(t)
	leader.index = h.index + 10
	leader.register(t0, "eu", "later")
	persistTo(t, leader.l, store)

	n, err := raftnode.Open(raftnode.Config{ID: "c3", Dir: dir, Bind: "127.0.0.1:0"}, h.l.FSM())
	if err == nil {
		n.Shutdown()
		t.Fatal("the halted member started on a snapshot of a newer protocol")
	}
	if !strings.Contains(err.Error(), tooNewText()) {
		t.Fatalf("start refused with %q, want %q", err, tooNewText())
	}
	if !bytes.Equal(before, digest(t, h.l)) {
		t.Fatal("the refused start changed the ledger")
	}
	if v := clusterProtocol(t, h.l); v != Protocol {
		t.Fatalf("cluster protocol %d after the refused start, want %d", v, Protocol)
	}
}

// TestOpen_LedgerOfAProtocolBelowTheOldestIsRefused: this build does not start on a ledger its
// cluster had raised to a protocol below OldestProtocol (the builds in between come first); the
// error names both protocols and the file is left as it was. A ledger at OldestProtocol, and one
// that never stored a protocol (new, or replaying from the start of the log), open.
func TestOpen_LedgerOfAProtocolBelowTheOldestIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name     string
		protocol int // 0: none stored
		refused  bool
	}{{"none stored", 0, false}, {"below the oldest", OldestProtocol - 1, true}, {"the oldest", OldestProtocol, false}, {"newest", Protocol, false}} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ledger.db")
			l, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.protocol > 0 {
				forceProtocol(t, l, tc.protocol)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			sum := fileSum(t, path)
			l, err = Open(path, Options{})
			if !tc.refused {
				if err != nil {
					t.Fatalf("open: %v", err)
				}
				l.Close()
				return
			}
			if err == nil {
				l.Close()
				t.Fatalf("opened a ledger of cluster protocol %d; the oldest this build runs in is %d", tc.protocol, OldestProtocol)
			}
			want := fmt.Sprintf("cluster protocol %d is older than this muster-coordinator runs in (from %d)", tc.protocol, OldestProtocol)
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("open refused with %q, want %q", err, want)
			}
			if fileSum(t, path) != sum {
				t.Fatal("a refused open changed the ledger file")
			}
		})
	}
}
