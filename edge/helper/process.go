// SPDX-License-Identifier: Apache-2.0

package helper

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
)

// call is one request waiting for its answer line.
type call struct {
	line []byte
	done chan answer
}

type answer struct {
	line []byte
	err  error
}

// process is one running persistent helper: a writer goroutine owns its stdin, a reader
// goroutine its stdout, and the FIFO pairs each answer line with the oldest request written.
type process struct {
	owner *Persistent
	name  string
	cmd   *exec.Cmd
	calls chan *call
	// quit is closed when the process should stop taking requests; the writer then closes stdin.
	quit   chan struct{}
	exited chan struct{}

	mu       sync.Mutex
	fifo     []*call
	cause    error
	killed   bool
	answered bool
}

func startProcess(p *Persistent) (*process, error) {
	c := p.cmd
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = waitDelay
	cmd.Env = c.env
	stderr := &lineLogger{log: c.Logger, helper: c.name, redact: c.redact}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("helper %s: stdin: %w", c.name, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("helper %s: stdout: %w", c.name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("helper %s: start: %w", c.name, err)
	}
	pr := &process{
		owner:  p,
		name:   c.name,
		cmd:    cmd,
		calls:  make(chan *call),
		quit:   make(chan struct{}),
		exited: make(chan struct{}),
	}
	go pr.write(stdin)
	go pr.read(stdout, stderr)
	return pr, nil
}

// write appends each call to the FIFO and then writes it, so FIFO order is stdin order.
func (pr *process) write(stdin io.WriteCloser) {
	defer stdin.Close()
	for {
		select {
		case c := <-pr.calls:
			if !pr.enqueue(c) {
				continue
			}
			if _, err := stdin.Write(c.line); err != nil {
				// c is queued: the reader fails it with the process's cause
				pr.stop(fmt.Errorf("%w while a request was being written", ErrExit))
				return
			}
		case <-pr.quit:
			return
		}
	}
}

func (pr *process) enqueue(c *call) bool {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.cause != nil {
		c.done <- answer{err: fmt.Errorf("helper %s: %w before the request was sent: %w", pr.name, ErrRestarted, pr.cause)}
		return false
	}
	pr.fifo = append(pr.fifo, c)
	return true
}

// read pairs answer lines with calls until stdout ends or the protocol breaks, then reaps.
func (pr *process) read(stdout io.Reader, stderr *lineLogger) {
	max := pr.owner.cmd.MaxOutput
	br := bufio.NewReaderSize(stdout, 64<<10)
	var buf []byte
	for {
		var err error
		buf, err = readLine(br, max, buf[:0])
		if err != nil {
			if errors.Is(err, ErrOutputTooLarge) {
				pr.violation(fmt.Errorf("helper %s: %w: an answer line longer than %d bytes", pr.name, ErrOutputTooLarge, max))
			}
			break
		}
		if len(bytes.TrimSpace(buf)) == 0 {
			pr.violation(fmt.Errorf("helper %s: %w: an empty answer line", pr.name, ErrEmptyOutput))
			break
		}
		if !json.Valid(buf) {
			pr.violation(fmt.Errorf("helper %s: %w: an answer line of %d bytes is not JSON", pr.name, ErrInvalidJSON, len(buf)))
			break
		}
		if !pr.deliver(bytes.Clone(buf)) {
			pr.violation(nil)
			break
		}
	}
	// drain so the helper is not blocked writing while it is killed
	_, _ = io.Copy(io.Discard, br)
	pr.finish(stderr)
}

// deliver hands line to the oldest call; false when no call was waiting for it.
func (pr *process) deliver(line []byte) bool {
	pr.mu.Lock()
	if len(pr.fifo) == 0 {
		pr.mu.Unlock()
		return false
	}
	c := pr.fifo[0]
	pr.fifo[0] = nil
	pr.fifo = pr.fifo[1:]
	// a helper that answered has recovered: its next death restarts it after the shortest delay
	pr.answered = true
	pr.mu.Unlock()
	c.done <- answer{line: line}
	return true
}

// violation fails the oldest call with err (nil: a line no call was waiting for) and restarts.
func (pr *process) violation(err error) {
	cause := fmt.Errorf("%w after an invalid answer line", ErrRestarted)
	pr.mu.Lock()
	if err != nil && len(pr.fifo) > 0 {
		c := pr.fifo[0]
		pr.fifo = pr.fifo[1:]
		c.done <- answer{err: err}
	}
	if err == nil {
		cause = fmt.Errorf("%w after an answer line with no request outstanding", ErrRestarted)
	}
	pr.mu.Unlock()
	pr.stop(cause)
}

// shutdown stops taking requests with cause; the writer closes stdin so the helper can exit.
func (pr *process) shutdown(cause error) {
	pr.mu.Lock()
	first := pr.cause == nil
	if first {
		pr.cause = cause
		close(pr.quit)
	}
	answered := pr.answered
	pr.mu.Unlock()
	if first {
		pr.owner.detach(pr, answered)
	}
}

// stop is shutdown and a SIGKILL to the helper's process group.
func (pr *process) stop(cause error) {
	pr.shutdown(cause)
	pr.kill()
}

// kill signals the process group unless it was already killed; the reader reaps only after
// marking it killed, so the group id cannot have been reused by then.
func (pr *process) kill() {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if !pr.killed {
		pr.killed = true
		_ = syscall.Kill(-pr.cmd.Process.Pid, syscall.SIGKILL)
	}
}

func (pr *process) stopCause() error {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.cause
}

// finish reaps the process, fails every call still waiting and tells the owner.
func (pr *process) finish(stderr *lineLogger) {
	// stdout ended: the helper exited or is being stopped; its leftover children go with it
	pr.shutdown(errExitPending)
	pr.kill()
	waitErr := pr.cmd.Wait()
	stderr.flush()

	pr.mu.Lock()
	cause := pr.cause
	if errors.Is(cause, errExitPending) {
		cause = fmt.Errorf("%w: %s", ErrExit, exitState(pr.cmd, waitErr))
		pr.cause = cause
	}
	waiting := pr.fifo
	pr.fifo = nil
	pr.mu.Unlock()

	if !errors.Is(cause, ErrClosed) {
		pr.owner.cmd.Logger.Warn("persistent helper stopped", "helper", pr.name, "reason", cause.Error(), "in_flight", len(waiting))
	}
	for _, c := range waiting {
		c.done <- answer{err: fmt.Errorf("helper %s: %w", pr.name, cause)}
	}
	pr.owner.reaped(pr)
	close(pr.exited)
}

// errExitPending marks a process whose stdout ended on its own; finish replaces it with the exit status.
var errExitPending = errors.New("exit pending")

func exitState(cmd *exec.Cmd, waitErr error) string {
	if cmd.ProcessState != nil {
		return cmd.ProcessState.String()
	}
	return waitErr.Error()
}

// readLine reads one line without its newline into buf; a line longer than max fails with
// ErrOutputTooLarge, a last line without a newline with io.ErrUnexpectedEOF.
func readLine(r *bufio.Reader, max int, buf []byte) ([]byte, error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if len(buf)+len(chunk) > max+1 {
			return buf, ErrOutputTooLarge
		}
		buf = append(buf, chunk...)
		switch {
		case err == nil:
			return bytes.TrimSuffix(buf[:len(buf)-1], []byte{'\r'}), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(buf) > 0:
			return buf, io.ErrUnexpectedEOF
		default:
			return buf, err
		}
	}
}
