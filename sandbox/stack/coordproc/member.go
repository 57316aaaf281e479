// SPDX-License-Identifier: Apache-2.0

package coordproc

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/seed96588659/muster/sandbox/internal/childproc"
)

// Member is one muster-coordinator serve process. Its id, addresses, data directory and log
// file stay the same across restarts; the log is appended to.
type Member struct {
	ID      string // --node-id: c1, c2, ...
	API     string // http://127.0.0.1:PORT, the member's own listener
	Raft    string // 127.0.0.1:PORT, its Raft bind address
	DataDir string // --data-dir
	LogPath string // its standard output and error, appended across restarts

	proc    *childproc.Proc
	timeout time.Duration // start until /healthz answers
	grace   time.Duration // SIGTERM until SIGKILL
	onStart func(id string, pid int)
}

// PID is the process id of the member's last start, 0 before the first.
func (m *Member) PID() int { return m.proc.PID() }

// Running reports whether the member's process has started and not ended.
func (m *Member) Running() bool { return m.proc.Running() }

// Exited is closed when the member's current process ends (at once before the first start).
func (m *Member) Exited() <-chan struct{} { return m.proc.Exited() }

// ExitErr is how the member's last process ended (nil while it runs or after a clean exit).
func (m *Member) ExitErr() error { return m.proc.ExitErr() }

// Bin is the binary the member's next start runs.
func (m *Member) Bin() string { return m.proc.Bin }

// Use sets the binary the member's next start runs, as replacing a stopped member's binary in a
// rolling upgrade does; the flags stay the same.
func (m *Member) Use(bin string) { m.proc.Bin = bin }

// JoinVia makes the member's next starts join through urls (--join) instead of bootstrapping or
// joining elsewhere: a member restarted without its state (a lost volume) must not bootstrap a
// cluster of its own.
func (m *Member) JoinVia(urls []string) {
	args := make([]string, 0, len(m.proc.Args)+2)
	for i := 0; i < len(m.proc.Args); i++ {
		switch m.proc.Args[i] {
		case "--bootstrap":
			continue
		case "--join":
			i++ // and its value
			continue
		}
		args = append(args, m.proc.Args[i])
	}
	m.proc.Args = append(args, "--join", strings.Join(urls, ","))
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
	if err := m.proc.Start(); err != nil {
		return err
	}
	if m.onStart != nil {
		m.onStart(m.ID, m.PID())
	}
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	if err := m.proc.WaitHTTP(ctx, m.API+"/healthz", 50*time.Millisecond); err != nil {
		_ = m.Kill()
		return fmt.Errorf("%w (start timeout %s; log %s: %s)", err, m.timeout, m.LogPath, tailLines(m.LogPath, logTailLines))
	}
	return nil
}

// Stop sends SIGTERM and waits the grace period, then SIGKILL. A member not running (killed
// earlier, say) is not an error; one that ends with a failure status after SIGTERM is.
func (m *Member) Stop() error { return m.proc.Stop(m.grace) }

// Kill sends SIGKILL to the member's process (its group too when it has one) and waits for it
// to end, as `kill -9` of a member would.
func (m *Member) Kill() error { return m.proc.Kill() }

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
