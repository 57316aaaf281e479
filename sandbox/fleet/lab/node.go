// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/seed96588659/muster/sandbox/fleet/realnode"
)

// realNode supervises one real node process.
type realNode struct {
	identity string
	region   string
	dir      string
	bin      string
	version  string
	// source is the binary the node was first laid out from (its first version).
	source string

	cmd    *exec.Cmd
	done   chan struct{}
	logger *slog.Logger
	// exitErr is written once before done is closed and read only after, so needs no lock.
	exitErr error
}

// start launches the node's binary copy with an absolute argv[0], which restart and
// release_update re-exec.
func (n *realNode) start() error {
	logf, err := os.OpenFile(filepath.Join(n.dir, "node.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("node %s log: %w", n.identity, err)
	}
	n.cmd = &exec.Cmd{
		Path:   n.bin,
		Args:   []string{n.bin, "node", "--dir", n.dir},
		Dir:    n.dir,
		Env:    append(os.Environ(), fmt.Sprintf("%s=%d", realnode.ParentEnv, os.Getpid())),
		Stdout: logf,
		Stderr: logf,
		// the node dies with the lab even when the lab is killed
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true},
	}
	if err := n.cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start node %s: %w", n.identity, err)
	}
	n.done = make(chan struct{})
	go func() {
		n.exitErr = n.cmd.Wait()
		logf.Close()
		if n.logger != nil {
			n.logger.Info("real node process ended", "region", n.region, "node", n.identity, "exit", fmt.Sprint(n.exitErr))
		}
		close(n.done)
	}()
	return nil
}

// pid is the node's current process id (restart and release_update exec in place, keeping it).
func (n *realNode) pid() int { return n.cmd.Process.Pid }

// exited reports whether the process ended and how.
func (n *realNode) exited() (bool, error) {
	select {
	case <-n.done:
		return true, n.exitErr
	default:
		return false, nil
	}
}

// waitConnected waits until this process run reports a broker connection.
func (n *realNode) waitConnected(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		st, err := realnode.ReadStatus(n.dir)
		if err == nil && st.PID == n.cmd.Process.Pid && st.Connected {
			return nil
		}
		if gone, exitErr := n.exited(); gone {
			reason := "exited"
			if exitErr != nil {
				reason = exitErr.Error()
			}
			if st.Error != "" {
				reason += ": " + st.Error
			} else if tail := logTail(filepath.Join(n.dir, "node.log")); tail != "" {
				reason += ": " + tail
			}
			return fmt.Errorf("node %s %s", n.identity, reason)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node %s not connected after %v (see %s)", n.identity, limit, filepath.Join(n.dir, "server.log"))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for node %s: %w", n.identity, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stop sends SIGTERM and, after grace, SIGKILL.
func (n *realNode) stop(grace time.Duration) error {
	if n.cmd == nil || n.cmd.Process == nil {
		return nil
	}
	if gone, _ := n.exited(); gone {
		return nil
	}
	if err := n.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop node %s: %w", n.identity, err)
	}
	select {
	case <-n.done:
		return nil
	case <-time.After(grace):
	}
	_ = n.cmd.Process.Kill()
	<-n.done
	return nil
}

// logTail is the last non-empty line of a log, for error messages.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
