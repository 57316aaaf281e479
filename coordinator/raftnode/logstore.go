// SPDX-License-Identifier: Apache-2.0

package raftnode

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// openTimeout is how long opening raft.db waits for bbolt's file lock, which only another process
// holds: without it, recover on a running member's directory waited for ever, deaf to signals.
const openTimeout = time.Second

// logCacheEntries is how many of the newest log entries a member keeps decoded in memory. A
// leader reads every entry back to send it to each follower (and the entry before a batch, for
// its term): from the cache that is a map lookup instead of a bbolt read transaction and a
// msgpack decode per entry and follower. 512 is seconds of the ten-region benchmark's entries,
// so only a follower that falls further behind is read from the file.
const logCacheEntries = 512

// openLogStore opens dir's raft.db, the Raft log and stable store. bbolt's defaults are kept:
// its freelist written on every commit (NoFreelistSync, which Consul offers) made no difference
// to the CPU of appending with compactions at raft's default snapshot settings.
func openLogStore(dir string, noSync bool) (*raftboltdb.BoltStore, error) {
	path := filepath.Join(dir, "raft.db")
	store, err := raftboltdb.New(raftboltdb.Options{Path: path, NoSync: noSync, BoltOptions: &bbolt.Options{Timeout: openTimeout}})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("raft log %s is in use by another process (is a member running on this directory?): %w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("open raft log %s: %w", path, err)
	}
	return store, nil
}
