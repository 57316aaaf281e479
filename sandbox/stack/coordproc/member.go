// SPDX-License-Identifier: Apache-2.0

package coordproc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// killWait bounds the wait for a process to end after SIGKILL.
const killWait = 30 * time.Second

// Member is one muster-coordinator serve process. Its id, addresses, data directory and log
// file stay the same across restarts; the log is appended to.
type Member struct {
	ID      string // --node-id: c1, c2, ...
	API     string // http://127.0.0.1:PORT, the member's own listener
	Raft    string // 127.0.0.1:PORT, its Raft bind address
	DataDir string // --data-dir
	LogPath string // its standard output and error, appended across restarts

	bin     string
	args    []string
	env     []string
	group   bool
	timeout time.Duration // start until /healthz answers
	grace   time.Duration // SIGTERM until SIGKILL
	onStart func(id string, pid int)

	mu      sync.Mutex
	pid     int
	exited  chan struct{}
	waitErr error
}

// PID is the process id of the member's last start, 0 before the first.
func (m *Member) PID() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pid
}

// Running reports whether the member's process has started and not ended.
func (m *Member) Running() bool {
	select {
	case <-m.Exited():
		return false
	default:
		return true
	}
}

// Exited is closed when the member's current process ends (at once before the first start).
func (m *Member) Exited() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.exited == nil {
		c := make(chan struct{})
		close(c)
		return c
	}
	return m.exited
}

// ExitErr is how the member's last process ended (nil while it runs or after a clean exit).
func (m *Member) ExitErr() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.waitErr
}

// Restart starts a stopped member again with the same flags and ports and waits for its API.
func (m *Member) Restart(ctx context.Context) error {
	if m.Running() {
		return fmt.Errorf("member %s: restart: still running as pid %d", m.ID, m.PID())
	}
	return m.start(ctx)
}

// start runs the process and waits until its /healthz answers; a member that does not get
// there is killed before the error returns.
func (m *Member) start(ctx context.Context) error {
	logf, err := os.OpenFile(m.LogPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("member %s: log: %w", m.ID, err)
	}
	fmt.Fprintf(logf, "==== coordproc: start %s at %s\n", m.ID, time.Now().UTC().Format(time.RFC3339Nano))
	cmd := exec.Command(m.bin, m.args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), m.env...)
	cmd.SysProcAttr = procAttr(m.group)
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("member %s: start %s: %w", m.ID, m.bin, err)
	}
	exited := make(chan struct{})
	m.mu.Lock()
	m.pid, m.exited, m.waitErr = cmd.Process.Pid, exited, nil
	m.mu.Unlock()
	go func() {
		err := cmd.Wait()
		logf.Close()
		m.mu.Lock()
		m.waitErr = err
		m.mu.Unlock()
		close(exited)
	}()
	if m.onStart != nil {
		m.onStart(m.ID, cmd.Process.Pid)
	}
	if err := m.waitHealthy(ctx); err != nil {
		_ = m.Kill()
		return err
	}
	return nil
}

// waitHealthy polls /healthz until it answers 200, the process exits, or the start timeout
// or ctx ends.
func (m *Member) waitHealthy(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	hc := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	exited := m.Exited()
	last := "no answer yet"
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.API+"/healthz", nil)
		if err != nil {
			return fmt.Errorf("member %s: healthz request: %w", m.ID, err)
		}
		if res, err := hc.Do(req); err != nil {
			last = err.Error()
		} else {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
			last = res.Status
		}
		select {
		case <-exited:
			return fmt.Errorf("member %s: exited at start: %v (log %s: %s)", m.ID, m.ExitErr(), m.LogPath, tailLines(m.LogPath, logTailLines))
		case <-ctx.Done():
			return fmt.Errorf("member %s: %s/healthz did not answer 200 within %s: %w (last: %s; log %s: %s)",
				m.ID, m.API, m.timeout, context.Cause(ctx), last, m.LogPath, tailLines(m.LogPath, logTailLines))
		case <-tick.C:
		}
	}
}

// Stop sends SIGTERM and waits the grace period, then SIGKILL. A member not running (killed
// earlier, say) is not an error; one that ends with a failure status after SIGTERM is.
func (m *Member) Stop() error {
	m.mu.Lock()
	pid, exited := m.pid, m.exited
	m.mu.Unlock()
	if exited == nil || !m.Running() {
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("member %s: SIGTERM to pid %d: %w", m.ID, pid, err)
	}
	t := time.NewTimer(m.grace)
	defer t.Stop()
	select {
	case <-exited:
		if m.group {
			_ = syscall.Kill(-pid, syscall.SIGKILL) // anything it left in its group
		}
		if err := m.ExitErr(); err != nil {
			return fmt.Errorf("member %s: pid %d ended after SIGTERM with %w", m.ID, pid, err)
		}
		return nil
	case <-t.C:
		if err := m.Kill(); err != nil {
			return err
		}
		return fmt.Errorf("member %s: pid %d did not stop within %s of SIGTERM and was killed", m.ID, pid, m.grace)
	}
}

// Kill sends SIGKILL to the member's process (its group too when it has one) and waits for it
// to end, as `kill -9` of a member would.
func (m *Member) Kill() error {
	m.mu.Lock()
	pid, exited := m.pid, m.exited
	m.mu.Unlock()
	if exited == nil || !m.Running() {
		return nil
	}
	target := pid
	if m.group {
		target = -pid
	}
	if err := syscall.Kill(target, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("member %s: SIGKILL to pid %d: %w", m.ID, pid, err)
	}
	select {
	case <-exited:
		return nil
	case <-time.After(killWait):
		return fmt.Errorf("member %s: pid %d did not end %s after SIGKILL", m.ID, pid, killWait)
	}
}

// logTailLines is how many of a member's last log lines an error carries.
const logTailLines = 8

// tailLines is the last n lines of the file at path, for errors.
func tailLines(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
