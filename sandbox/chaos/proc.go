// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Proc is one supervised child process that can be started again after it ended: a
// coordinator member or an edge. Its output goes to one log file, appended across restarts.
type Proc struct {
	Name    string
	Bin     string
	Args    []string
	Env     []string
	LogPath string

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	stopped bool // SIGSTOPped and not yet continued
}

// Start launches the process in its own process group (killed if this process dies).
func (p *Proc) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && !isClosed(p.exited) {
		return fmt.Errorf("start %s: already running as pid %d", p.Name, p.cmd.Process.Pid)
	}
	logf, err := os.OpenFile(p.LogPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("start %s: log: %w", p.Name, err)
	}
	fmt.Fprintf(logf, "==== chaos: start %s at %s\n", p.Name, time.Now().UTC().Format(time.RFC3339Nano))
	cmd := exec.Command(p.Bin, p.Args...)
	cmd.Env = append(os.Environ(), p.Env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	exited := make(chan struct{})
	p.cmd, p.exited, p.waitErr, p.stopped = cmd, exited, nil, false
	go func() {
		err := cmd.Wait()
		logf.Close()
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		close(exited)
	}()
	return nil
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// PID is the running process's id, 0 when none runs.
func (p *Proc) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || isClosed(p.exited) {
		return 0
	}
	return p.cmd.Process.Pid
}

// Running reports whether the process is alive (stopped counts as alive).
func (p *Proc) Running() bool { return p.PID() != 0 }

// Exited is closed when the current process ends.
func (p *Proc) Exited() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited == nil {
		c := make(chan struct{})
		close(c)
		return c
	}
	return p.exited
}

// ExitErr is how the last process ended.
func (p *Proc) ExitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waitErr
}

// signal sends sig to the process only (not its group: an edge's helper lives on as it would).
func (p *Proc) signal(sig syscall.Signal) error {
	pid := p.PID()
	if pid == 0 {
		return fmt.Errorf("%s: not running", p.Name)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		return fmt.Errorf("%s: signal %v: %w", p.Name, sig, err)
	}
	return nil
}

// Kill sends SIGKILL and waits for the process to end; its children (a helper) die with the
// group, as a crashed unit's cgroup would take them.
func (p *Proc) Kill() error {
	pid := p.PID()
	if pid == 0 {
		return nil
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	select {
	case <-p.Exited():
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("%s: pid %d did not end 30s after SIGKILL", p.Name, pid)
	}
}

// Pause sends SIGSTOP: the process keeps its sockets and its monotonic clock keeps running.
func (p *Proc) Pause() error {
	if err := p.signal(syscall.SIGSTOP); err != nil {
		return err
	}
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	return nil
}

// Continue sends SIGCONT to a paused process.
func (p *Proc) Continue() error {
	p.mu.Lock()
	p.stopped = false
	p.mu.Unlock()
	return p.signal(syscall.SIGCONT)
}

// Stop ends the process: SIGCONT if paused, SIGTERM, then SIGKILL of its group after grace.
func (p *Proc) Stop(grace time.Duration) error {
	pid := p.PID()
	if pid == 0 {
		return nil
	}
	p.mu.Lock()
	wasStopped := p.stopped
	p.mu.Unlock()
	if wasStopped {
		_ = p.Continue()
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("%s: SIGTERM: %w", p.Name, err)
	}
	select {
	case <-p.Exited():
		_ = syscall.Kill(-pid, syscall.SIGKILL) // a helper left behind
		return nil
	case <-time.After(grace):
		_ = p.Kill()
		return fmt.Errorf("%s: did not stop within %s of SIGTERM and was killed", p.Name, grace)
	}
}
