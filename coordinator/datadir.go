// SPDX-License-Identifier: Apache-2.0

package coordinator

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/coordinator/raftnode"
)

// ledgerFile is the ledger's file in the member's data directory, beside raft's log and snapshots.
const ledgerFile = "ledger.db"

// lockFile in the data directory is locked (flock) by the one process that uses the directory, a
// serving member or a recover, and names that process. The lock, not the file, is what excludes:
// the kernel drops it when the process ends however it ends, so a stale file never blocks.
const lockFile = "muster.lock"

// ErrDataDirInUse means another process uses the member's data directory: the member is running.
var ErrDataDirInUse = errors.New("data directory in use")

// dataDirLock is a process's hold on a data directory; Unlock releases it.
type dataDirLock struct{ f *os.File }

// lockDataDir takes dir's lock without waiting and writes this process's pid in it. A directory
// another process holds is refused at once with ErrDataDirInUse, naming that process: bbolt's own
// lock on raft.db and ledger.db would otherwise block an open for ever (recover) or, with a
// timeout, read as a damaged file.
func lockDataDir(dir string) (*dataDirLock, error) {
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock data dir: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := lockHolder(f)
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is in use by %s (%s is locked): a member is running on it; stop it first", ErrDataDirInUse, dir, holder, path)
		}
		return nil, fmt.Errorf("lock data dir %s: %w", dir, err)
	}
	if err := f.Truncate(0); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock data dir %s: %w", dir, err)
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock data dir %s: %w", dir, err)
	}
	return &dataDirLock{f: f}, nil
}

// lockHolder names the process that wrote its pid in the lock file f, if that process is alive.
func lockHolder(f *os.File) string {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return "another process"
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return "another process"
	}
	return "a running process, pid " + strconv.Itoa(pid)
}

// Unlock releases the directory; the pid stays in the file, naming nobody once the lock is free.
func (l *dataDirLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

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
// (raftnode.RecoverCluster), applying its log to the member's ledger, and marks the ledger
// recovered: its first leader holds new grants until a lease only the lost members recorded has
// ended (ledger.Hold). A directory a running process holds is refused at once (ErrDataDirInUse).
// Of cfg it reads ID, DataDir, Timeouts, Clock, Logger and Leases.TTL: the longest lease.ttl a
// member of the cluster ran (0: every member ran the survivors' own), which the hold lasts at
// least.
func RecoverCluster(cfg Config, peers []raftnode.Peer) error {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	lock, err := lockDataDir(cfg.DataDir)
	if err != nil {
		return fmt.Errorf("recover %s: %w", cfg.ID, err)
	}
	defer lock.Unlock()
	var l *ledger.Ledger
	defer func() {
		if l != nil {
			_ = l.Close()
		}
	}()
	err = raftnode.RecoverCluster(cfg.raftConfig(log), peers, func() (raftnode.FSM, error) {
		var err error
		if l, err = openLedger(cfg.DataDir, ledger.Options{Logger: log}); err != nil {
			return nil, err
		}
		return l.FSM(), nil
	})
	if err != nil {
		return err
	}
	// After raft's recover, which may have replaced the ledger from a snapshot. A crash before
	// this line leaves the configuration rewritten and no mark: the operator, told recover
	// failed, runs it again, which is safe.
	clock := cfg.Clock
	if clock == nil {
		clock = newSystemClock()
	}
	ids := make([]string, len(peers))
	for i, p := range peers {
		ids[i] = p.ID
	}
	if err := l.MarkRecovered(clock.Now(), ids, cfg.Leases.TTL); err != nil {
		return fmt.Errorf("recover %s: %w", cfg.ID, err)
	}
	log.Warn("ledger marked recovered: the first leader holds new grants until every lease the lost members may have granted has ended", "member", cfg.ID)
	return nil
}
