// SPDX-License-Identifier: Apache-2.0

package raftnode

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/raft"
)

// Peer is one member of a recovery configuration.
type Peer struct {
	ID      string
	Address string
}

// RecoverCluster rewrites a STOPPED member's Raft configuration to peers, for when quorum is lost
// for good (for example two of three members destroyed). Run it on every surviving member with
// the same peers, then start them normally; they elect a leader among themselves. Entries the
// lost members acknowledged that no survivor holds are lost: choose the survivor with the highest
// applied index (Status) as the first to start. openFSM opens the state machine the log is applied
// to once the member's Raft state is found; the caller closes it after RecoverCluster returns.
func RecoverCluster(cfg Config, peers []Peer, openFSM func() (FSM, error)) error {
	if len(peers) == 0 {
		return fmt.Errorf("recover %s: no peers given", cfg.ID)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	rc, err := cfg.raftConfig()
	if err != nil {
		return err
	}
	rc.Logger = newHCLogger("raft-recover", cfg.Logger, slog.LevelWarn)
	if _, err := os.Stat(filepath.Join(cfg.Dir, "raft.db")); err != nil {
		return fmt.Errorf("recover %s: no raft state in %s: %w", cfg.ID, cfg.Dir, err)
	}
	store, err := openLogStore(cfg.Dir, false)
	if err != nil {
		return fmt.Errorf("recover %s: %w", cfg.ID, err)
	}
	defer store.Close()
	snaps, err := raft.NewFileSnapshotStoreWithLogger(cfg.Dir, 2, rc.Logger)
	if err != nil {
		return fmt.Errorf("recover %s: %w", cfg.ID, err)
	}
	fsm, err := openFSM()
	if err != nil {
		return fmt.Errorf("recover %s: %w", cfg.ID, err)
	}
	_, trans := raft.NewInmemTransport(raft.ServerAddress(cfg.ID))
	conf := raft.Configuration{}
	for _, p := range peers {
		if p.ID == "" || p.Address == "" {
			return fmt.Errorf("recover %s: peer %+v needs an id and an address", cfg.ID, p)
		}
		conf.Servers = append(conf.Servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.Address)})
	}
	start := time.Now()
	if err := raft.RecoverCluster(rc, fsm, store, store, snaps, trans, conf); err != nil {
		return fmt.Errorf("recover %s: %w", cfg.ID, err)
	}
	cfg.Logger.Info("raft configuration recovered", "member", cfg.ID, "peers", len(peers), "took", time.Since(start))
	return nil
}
