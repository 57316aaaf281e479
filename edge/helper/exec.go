// SPDX-License-Identifier: Apache-2.0

package helper

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// waitDelay bounds how long Wait waits for the helper's pipes after the process was killed or
// exited: a grandchild that left the process group may hold them open.
const waitDelay = 2 * time.Second

// Exec forks the helper for every request, as choria-provisioner does.
type Exec struct {
	cmd *command
}

// NewExec validates opts and returns a runner that forks opts.Command per request.
func NewExec(opts Options) (*Exec, error) {
	c, err := newCommand(opts)
	if err != nil {
		return nil, err
	}
	return &Exec{cmd: c}, nil
}

// Run forks the helper, writes req to its stdin and decodes its stdout.
func (e *Exec) Run(ctx context.Context, req *Request) (*Response, error) {
	start := time.Now()
	defer e.cmd.observe(start)

	out, err := e.run(ctx, req)
	if err != nil {
		return nil, err
	}
	res := &Response{}
	if err := decode(e.cmd.name, out, res); err != nil {
		return nil, err
	}
	if err := checkCertificate(e.cmd.name, req.Identity, res.Certificate); err != nil {
		return nil, err
	}
	return res, nil
}

// Close does nothing: no process outlives a Run.
func (e *Exec) Close() error { return nil }

func (e *Exec) run(ctx context.Context, req *Request) ([]byte, error) {
	c := e.cmd
	input, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("helper %s: encode request for %s: %w", c.name, req.Identity, err)
	}

	// Two causes end a run early besides the caller: the timeout and an oversized answer.
	cctx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	tctx, cancel := context.WithTimeoutCause(cctx, c.Timeout, ErrTimeout)
	defer cancel()

	stdout := &limitBuffer{limit: c.MaxOutput, exceeded: func() { abort(ErrOutputTooLarge) }}
	stderr := &headBuffer{limit: 2 * maxStderrLog, redact: c.redact}
	cmd := exec.CommandContext(tctx, c.argv[0], c.argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// kill the whole group so the helper's children die with it; the leader is not reaped yet,
	// so its pid still names the group
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = waitDelay
	cmd.Env = c.env
	cmd.Stdin = bytes.NewReader(input)
	cmd.Stdout = stdout
	cmd.Stderr = stderr

	runErr := cmd.Run()
	if stderr.buf.Len() > 0 {
		c.Logger.Warn("helper stderr", "helper", c.name, "identity", req.Identity, "stderr", stderr.text())
	}

	if tctx.Err() != nil {
		switch cause := context.Cause(tctx); {
		case errors.Is(cause, ErrTimeout):
			return nil, fmt.Errorf("helper %s: %w after %s", c.name, ErrTimeout, c.Timeout)
		case errors.Is(cause, ErrOutputTooLarge):
			return nil, fmt.Errorf("helper %s: %w: more than %d bytes", c.name, ErrOutputTooLarge, c.MaxOutput)
		default:
			return nil, fmt.Errorf("helper %s: %w", c.name, cause)
		}
	}
	if runErr != nil {
		var exit *exec.ExitError
		if errors.As(runErr, &exit) {
			return nil, fmt.Errorf("helper %s: %w unsuccessfully: %s", c.name, ErrExit, exit.ProcessState)
		}
		return nil, fmt.Errorf("helper %s: %w", c.name, runErr)
	}
	if len(bytes.TrimSpace(stdout.buf.Bytes())) == 0 {
		return nil, fmt.Errorf("helper %s: %w", c.name, ErrEmptyOutput)
	}
	return stdout.buf.Bytes(), nil
}

// limitBuffer holds an answer of at most limit bytes and reports the first byte beyond it.
type limitBuffer struct {
	limit    int
	buf      bytes.Buffer
	over     bool
	exceeded func()
}

func (l *limitBuffer) Write(p []byte) (int, error) {
	if l.over {
		return len(p), nil
	}
	if l.buf.Len()+len(p) > l.limit {
		l.over = true
		l.exceeded()
		// keep draining so the helper is not blocked on a full pipe while it is being killed
		return len(p), nil
	}
	return l.buf.Write(p)
}
