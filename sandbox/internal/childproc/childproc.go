// SPDX-License-Identifier: Apache-2.0

// Package childproc supervises one child process of the sandbox's stack (a coordinator member,
// an edge): started again after it ended, its output appended to one log file, stopped with
// SIGTERM and a grace period, killed, paused, and waited on until an HTTP endpoint answers.
package childproc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// killWait bounds the wait for a process to end after SIGKILL.
const killWait = 30 * time.Second

// Proc is one child process that can be started again after it ended.
type Proc struct {
	// Name names the child in errors and in the log's start lines ("member c1", "edge x").
	Name    string
	Bin     string
	Args    []string
	Env     []string // added to this process's environment
	LogPath string   // standard output and error, appended across starts
	// Group gives the child a process group of its own, which Kill and Stop end with it (a
	// helper it runs dies with it, as a crashed unit's cgroup would take it).
	Group bool

	mu      sync.Mutex
	pid     int
	exited  chan struct{}
	waitErr error
	paused  bool // SIGSTOPped and not yet continued
}

// Start runs the process; it fails if the last start still runs.
func (p *Proc) Start() error {
	if p.Running() {
		return fmt.Errorf("%s: start: still running as pid %d", p.Name, p.PID())
	}
	logf, err := os.OpenFile(p.LogPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("%s: log: %w", p.Name, err)
	}
	fmt.Fprintf(logf, "==== start %s at %s\n", p.Name, time.Now().UTC().Format(time.RFC3339Nano))
	cmd := exec.Command(p.Bin, p.Args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), p.Env...)
	cmd.SysProcAttr = procAttr(p.Group)
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("%s: start %s: %w", p.Name, p.Bin, err)
	}
	exited := make(chan struct{})
	p.mu.Lock()
	p.pid, p.exited, p.waitErr, p.paused = cmd.Process.Pid, exited, nil, false
	p.mu.Unlock()
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

// PID is the process id of the last start, 0 before the first.
func (p *Proc) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pid
}

// Running reports whether the process has started and not ended (paused counts as running).
func (p *Proc) Running() bool {
	select {
	case <-p.Exited():
		return false
	default:
		return true
	}
}

// Exited is closed when the current process ends (at once before the first start).
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

// ExitErr is how the last process ended (nil while it runs or after a clean exit).
func (p *Proc) ExitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waitErr
}

// WaitHTTP polls url every interval until it answers 200; it fails when the process exits
// first or ctx ends, saying what the last try got.
func (p *Proc) WaitHTTP(ctx context.Context, url string, interval time.Duration) error {
	hc := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	exited := p.Exited()
	last := "no answer yet"
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("%s: request %s: %w", p.Name, url, err)
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
			return fmt.Errorf("%s: exited at start, before %s answered 200: %v", p.Name, url, p.ExitErr())
		case <-ctx.Done():
			return fmt.Errorf("%s: %s did not answer 200: %w (last: %s)", p.Name, url, context.Cause(ctx), last)
		case <-tick.C:
		}
	}
}

// Stop sends SIGTERM (after SIGCONT if paused) and waits grace, then SIGKILL. A process not
// running is not an error; one that ends with a failure status after SIGTERM is.
func (p *Proc) Stop(grace time.Duration) error {
	if !p.Running() {
		return nil
	}
	p.mu.Lock()
	pid, exited, paused := p.pid, p.exited, p.paused
	p.mu.Unlock()
	if paused {
		_ = p.Continue()
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("%s: SIGTERM to pid %d: %w", p.Name, pid, err)
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-exited:
		if p.Group {
			_ = syscall.Kill(-pid, syscall.SIGKILL) // anything it left in its group
		}
		if err := p.ExitErr(); err != nil {
			return fmt.Errorf("%s: pid %d ended after SIGTERM with %w", p.Name, pid, err)
		}
		return nil
	case <-t.C:
		if err := p.Kill(); err != nil {
			return err
		}
		return fmt.Errorf("%s: pid %d did not stop within %s of SIGTERM and was killed", p.Name, pid, grace)
	}
}

// Kill sends SIGKILL to the process (its group too when it has one) and waits for it to end,
// as `kill -9` would.
func (p *Proc) Kill() error {
	if !p.Running() {
		return nil
	}
	p.mu.Lock()
	pid, exited := p.pid, p.exited
	p.mu.Unlock()
	target := pid
	if p.Group {
		target = -pid
	}
	if err := syscall.Kill(target, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("%s: SIGKILL to pid %d: %w", p.Name, pid, err)
	}
	select {
	case <-exited:
		return nil
	case <-time.After(killWait):
		return fmt.Errorf("%s: pid %d did not end %s after SIGKILL", p.Name, pid, killWait)
	}
}

// Pause sends SIGSTOP to the process alone: it keeps its sockets and its monotonic clock keeps
// running.
func (p *Proc) Pause() error {
	if err := p.signal(syscall.SIGSTOP); err != nil {
		return err
	}
	p.mu.Lock()
	p.paused = true
	p.mu.Unlock()
	return nil
}

// Continue sends SIGCONT to a paused process.
func (p *Proc) Continue() error {
	p.mu.Lock()
	p.paused = false
	p.mu.Unlock()
	return p.signal(syscall.SIGCONT)
}

func (p *Proc) signal(sig syscall.Signal) error {
	if !p.Running() {
		return fmt.Errorf("%s: not running", p.Name)
	}
	if err := syscall.Kill(p.PID(), sig); err != nil {
		return fmt.Errorf("%s: signal %v: %w", p.Name, sig, err)
	}
	return nil
}
