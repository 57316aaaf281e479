// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// testdata/ledger-0.* were written by the build before ledger.Node stopped embedding api.Node
// (commit 759ce55): a ledger of twelve nodes in every state, as its snapshot (the bbolt file), its
// digest and its nodes as JSON. They are never regenerated: they are what members in the field hold.
const (
	goldenSnapshot = "testdata/ledger-0.snap"
	goldenDigest   = "testdata/ledger-0.digest"
	goldenNodes    = "testdata/ledger-0.nodes.json"
)

// A snapshot taken by an earlier build restores to the same ledger, node for node, and every
// record it holds is the one this build writes for the node it decodes to.
func TestLedger_RestoresASnapshotOfAnEarlierBuild(t *testing.T) {
	l, err := Open(filepath.Join(t.TempDir(), "ledger.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	f, err := os.Open(goldenSnapshot)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Restore(f); err != nil {
		t.Fatalf("restore %s: %v", goldenSnapshot, err)
	}
	checkGoldenLedger(t, l)
}

// A ledger file written by an earlier build, whose cluster ran protocol 3, is not started on: its
// members upgrade through a build of OldestProtocol first (versions.go). The file is left as it
// is; its records still decode, as the snapshot above shows.
func TestLedger_RefusesAtStartAFileOfABuildBeforeTheOldest(t *testing.T) {
	b, err := os.ReadFile(goldenSnapshot)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ledger.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Open(path, Options{})
	if err == nil {
		l.Close()
		t.Fatal("started on a ledger file of cluster protocol 3")
	}
	want := fmt.Sprintf("cluster protocol 3 is older than this muster-coordinator runs in (from %d): upgrade every member to a build of protocol %d first", OldestProtocol, OldestProtocol)
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("open refused with %q, want %q", err, want)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, b) {
		t.Fatal("a refused open changed the file")
	}
}

func checkGoldenLedger(t *testing.T, l *Ledger) {
	t.Helper()
	wantDigest, err := os.ReadFile(goldenDigest)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := l.Digest(); err != nil || hex.EncodeToString(d) != strings.TrimSpace(string(wantDigest)) {
		t.Fatalf("digest %x (%v), want %s", d, err, wantDigest)
	}
	nodes, _, err := l.Nodes(NodeFilter{WithHistory: true, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(nodes, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(goldenNodes)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(append(got, '\n'), want) {
		t.Fatalf("nodes of %s:\n got %s\nwant %s", goldenSnapshot, got, want)
	}
	err = l.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketNodes).ForEach(func(k, v []byte) error {
			n, err := decodeNode(string(k), v)
			if err != nil {
				return err
			}
			if enc := encodeNode(n); !bytes.Equal(enc, v) {
				t.Errorf("node %s: this build writes %x, the earlier one wrote %x", k, enc, v)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}
