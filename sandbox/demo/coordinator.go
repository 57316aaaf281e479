// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// coordinatorLeaseArgs are the demo's lease settings: a failed node is offered again after a
// second (doubling up to four) and abandoned after five attempts, so the faulty nodes settle in
// seconds rather than minutes; everything else keeps the coordinator's defaults.
var coordinatorLeaseArgs = []string{
	"--lease-retry-backoff", "1s",
	"--lease-retry-backoff-max", "4s",
	"--lease-max-attempts", "5",
}

// memberStartTimeout bounds one member's start until its API answers /healthz.
const memberStartTimeout = 30 * time.Second

// memberProc is one muster-coordinator serve child in its own process group.
type memberProc struct {
	id      string
	apiURL  string // http://127.0.0.1:PORT
	raft    string // 127.0.0.1:PORT
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	grace   time.Duration
}

// memberSpec is what every member of the run shares.
type memberSpec struct {
	bin      string
	dir      string // data dirs and logs go below it
	secrets  secrets
	stopWait time.Duration
}

// startMember starts member id (bootstrapping, or joining the members at join) on fresh
// loopback ports, trying again on others if a port was taken before the member bound it.
func startMember(ctx context.Context, s memberSpec, id string, join []string) (*memberProc, error) {
	var lastErr error
	for range 3 {
		ap, err := freePort()
		if err != nil {
			return nil, err
		}
		rp, err := freePort()
		if err != nil {
			return nil, err
		}
		m := &memberProc{id: id, apiURL: fmt.Sprintf("http://127.0.0.1:%d", ap), raft: fmt.Sprintf("127.0.0.1:%d", rp), grace: s.stopWait}
		if lastErr = m.launch(ctx, s, join); lastErr == nil {
			return m, nil
		}
	}
	return nil, lastErr
}

func (m *memberProc) launch(ctx context.Context, s memberSpec, join []string) error {
	m.logPath = filepath.Join(s.dir, m.id+".log")
	args := []string{"serve",
		"--node-id", m.id,
		"--data-dir", filepath.Join(s.dir, m.id),
		"--raft-bind", m.raft,
		"--http-bind", strings.TrimPrefix(m.apiURL, "http://"),
	}
	args = append(args, coordinatorLeaseArgs...)
	if len(join) == 0 {
		args = append(args, "--bootstrap")
	} else {
		args = append(args, "--join", strings.Join(join, ","))
	}
	logf, err := os.OpenFile(m.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("coordinator %s log: %w", m.id, err)
	}
	m.cmd = exec.Command(s.bin, args...)
	m.cmd.Stdout, m.cmd.Stderr = logf, logf
	// The tokens go in the environment, never on the command line (ps shows that).
	m.cmd.Env = append(os.Environ(), s.secrets.coordinatorEnv()...)
	m.cmd.SysProcAttr = procAttr()
	m.exited = make(chan struct{})
	if err := m.cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start coordinator %s: %w", m.id, err)
	}
	go func() {
		m.waitErr = m.cmd.Wait()
		logf.Close()
		close(m.exited)
	}()
	if err := m.waitHealthy(ctx); err != nil {
		killGroup(m.PID())
		<-m.exited
		return err
	}
	return nil
}

// waitHealthy polls /healthz until it answers, the member exits, or the start timeout passes.
func (m *memberProc) waitHealthy(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, memberStartTimeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.apiURL+"/healthz", nil)
		if err != nil {
			return fmt.Errorf("coordinator %s healthz: %w", m.id, err)
		}
		if res, err := client.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-m.exited:
			return fmt.Errorf("coordinator %s exited at start: %v (log: %s)", m.id, m.waitErr, logTail(m.logPath))
		case <-ctx.Done():
			return fmt.Errorf("coordinator %s not listening: %w (log: %s)", m.id, context.Cause(ctx), logTail(m.logPath))
		case <-tick.C:
		}
	}
}

// PID is the member's process id.
func (m *memberProc) PID() int { return m.cmd.Process.Pid }

// running reports whether the member has not exited.
func (m *memberProc) running() bool {
	select {
	case <-m.exited:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM, then SIGKILL to the process group after the grace period, and waits. A
// member killed earlier (the failover demonstration) is not an error.
func (m *memberProc) stop() error {
	if !m.running() {
		return nil
	}
	if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop coordinator %s: %w", m.id, err)
	}
	t := time.NewTimer(m.grace)
	defer t.Stop()
	select {
	case <-m.exited:
		if m.waitErr != nil {
			return fmt.Errorf("coordinator %s: %w", m.id, m.waitErr)
		}
		return nil
	case <-t.C:
		killGroup(m.PID())
		<-m.exited
		return fmt.Errorf("coordinator %s did not stop within %v of SIGTERM and was killed", m.id, m.grace)
	}
}

// kill sends SIGKILL to the member alone, as `kill -9 PID` would, and waits for it to end.
func (m *memberProc) kill() {
	_ = m.cmd.Process.Signal(syscall.SIGKILL)
	<-m.exited
}

// logTail is the last lines of a log file, for errors.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-5):], "\n")
}
