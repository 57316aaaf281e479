// SPDX-License-Identifier: Apache-2.0

package raftnode

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/hashicorp/raft"
)

// raft's LogCache hands out its cached entries by copying the Log struct, so the copy's Data is
// the cached entry's own array; decoding a later entry from raft.db into that same struct writes
// into it (msgpack reuses a byte slice with room). A scan of the log for the latest
// configuration that kept one Log across entries did exactly that: a cached entry not yet applied
// then read as another entry's bytes followed by its own tail, and chaos caught the member that
// applied it diverging from the others. Reading the configuration must leave every cached entry
// as it was stored.
func TestLatestConfiguration_LeavesCachedEntriesIntact(t *testing.T) {
	store, err := openLogStore(t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	logs, err := raft.NewLogCache(logCacheEntries, store)
	if err != nil {
		t.Fatal(err)
	}
	conf := raft.Configuration{Servers: []raft.Server{{Suffrage: raft.Voter, ID: "c1", Address: "127.0.0.1:1"}}}
	entry := func(i uint64, data []byte) *raft.Log {
		return &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: data}
	}
	// On disk only (a restarted member's older entries): a configuration, then short commands.
	old := []*raft.Log{{Index: 1, Term: 1, Type: raft.LogConfiguration, Data: raft.EncodeConfiguration(conf)}}
	for i := uint64(2); i <= 10; i++ {
		old = append(old, entry(i, []byte(fmt.Sprintf("\x01{\"register\":%d}", i))))
	}
	if err := store.StoreLogs(old); err != nil {
		t.Fatal(err)
	}
	// Received since the start, so cached: long commands not applied yet.
	long := func(i uint64) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, 8000) }
	var recent []*raft.Log
	for i := uint64(11); i <= 14; i++ {
		recent = append(recent, entry(i, long(i)))
	}
	if err := logs.StoreLogs(recent); err != nil {
		t.Fatal(err)
	}

	snaps, err := raft.NewFileSnapshotStore(t.TempDir(), 1, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	n := &Node{logs: logs, snaps: snaps}
	got, idx, err := n.readLatestConfiguration()
	if err != nil || idx != 1 || len(got.Servers) != 1 {
		t.Fatalf("latest configuration %+v at %d, %v; want c1's at index 1", got, idx, err)
	}
	for i := uint64(11); i <= 14; i++ {
		var l raft.Log
		if err := logs.GetLog(i, &l); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(l.Data, long(i)) {
			t.Fatalf("cached entry %d after reading the configuration starts %.30q, want it as stored", i, l.Data)
		}
	}
}
