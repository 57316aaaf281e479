// SPDX-License-Identifier: Apache-2.0

package coordinator

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/coordinator/raftnode"
)

// ledgerFile is the ledger's file in the member's data directory, beside raft's log and snapshots.
const ledgerFile = "ledger.db"

// privateDataDir creates the member's data directory. It holds the ledger, the Raft log and the
// snapshots, which raft writes 0644: a directory that existed already (made by a package, or by
// hand as 0755) is made private as well.
func privateDataDir(dir string) error {
	if dir == "" {
		return errors.New("data dir is empty")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("make data dir %s private: %w", dir, err)
	}
	return nil
}

// openLedger opens the ledger file of the member's data directory.
func openLedger(dir string, opts ledger.Options) (*ledger.Ledger, error) {
	return ledger.Open(filepath.Join(dir, ledgerFile), opts)
}

// RecoverCluster rewrites a STOPPED member's Raft membership to peers when quorum is lost for good
// (raftnode.RecoverCluster), applying its log to the member's ledger. Of cfg it reads ID, DataDir,
// Timeouts and Logger.
func RecoverCluster(cfg Config, peers []raftnode.Peer) error {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var l *ledger.Ledger
	defer func() {
		if l != nil {
			_ = l.Close()
		}
	}()
	return raftnode.RecoverCluster(cfg.raftConfig(log), peers, func() (raftnode.FSM, error) {
		var err error
		if l, err = openLedger(cfg.DataDir, ledger.Options{Logger: log}); err != nil {
			return nil, err
		}
		return l.FSM(), nil
	})
}
