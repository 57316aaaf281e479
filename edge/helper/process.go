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
	"strconv"
	"sync"
	"syscall"
)

// call is one request waiting for its answer line.
type call struct {
	id   uint64
	line []byte
	done chan answer
}

type answer struct {
	line []byte
	err  error
}

// process is one running persistent helper: a writer goroutine owns its stdin, a reader
// goroutine its stdout, and each answer line goes to the request in flight whose id it echoes.
type process struct {
	owner *Persistent
	name  string
	cmd   *exec.Cmd
	calls chan *call
	// quit is closed when the process should stop taking requests; the writer then closes stdin.
	quit   chan struct{}
	exited chan struct{}

	mu sync.Mutex
	// inFlight holds the calls written (or being written) and not yet answered, by id.
	inFlight map[uint64]*call
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
		owner:    p,
		name:     c.name,
		cmd:      cmd,
		calls:    make(chan *call),
		quit:     make(chan struct{}),
		exited:   make(chan struct{}),
		inFlight: map[uint64]*call{},
	}
	go pr.write(stdin)
	go pr.read(stdout, stderr)
	return pr, nil
}

// write registers each call as in flight and then writes it, so an answer never comes before
// its call is known.
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
	pr.inFlight[c.id] = c
	return true
}

// read hands answer lines to their calls until stdout ends or the protocol breaks, then reaps.
func (pr *process) read(stdout io.Reader, stderr *lineLogger) {
	max := pr.owner.cmd.MaxOutput
	br := bufio.NewReaderSize(stdout, 64<<10)
	var buf []byte
	for {
		var err error
		buf, err = readLine(br, max, buf[:0])
		if err != nil {
			if errors.Is(err, ErrOutputTooLarge) {
				pr.violation(fmt.Errorf("%w: an answer line longer than %d bytes", ErrOutputTooLarge, max))
			}
			break
		}
		if len(bytes.TrimSpace(buf)) == 0 {
			pr.violation(fmt.Errorf("%w: an empty answer line", ErrEmptyOutput))
			break
		}
		id, err := answerID(buf)
		if err != nil {
			pr.violation(err)
			break
		}
		if !pr.deliver(id, bytes.Clone(buf)) {
			pr.violation(fmt.Errorf("%w: an answer with id %d", ErrUnmatched, id))
			break
		}
	}
	// drain so the helper is not blocked writing while it is killed
	_, _ = io.Copy(io.Discard, br)
	pr.finish(stderr)
}

// answerID is the id an answer line echoes. Its errors never quote the line, which may hold a
// private key.
func answerID(line []byte) (uint64, error) {
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		return 0, fmt.Errorf("%w: an answer line of %d bytes is not a JSON object", ErrInvalidJSON, len(line))
	}
	if len(probe.ID) == 0 || string(probe.ID) == "null" {
		return 0, fmt.Errorf(`%w: a persistent helper must echo each request's "id" in its answer (docs/helper.md)`, ErrMissingID)
	}
	id, err := strconv.ParseUint(string(probe.ID), 10, 64)
	if err != nil {
		return 0, fmt.Errorf(`%w: an answer whose "id" is not a number the edge sent`, ErrUnmatched)
	}
	return id, nil
}

// deliver hands line to the call with id; false when no call in flight has it.
func (pr *process) deliver(id uint64, line []byte) bool {
	pr.mu.Lock()
	c, ok := pr.inFlight[id]
	if !ok {
		pr.mu.Unlock()
		return false
	}
	delete(pr.inFlight, id)
	// a helper that answered has recovered: its next death restarts it after the shortest delay
	pr.answered = true
	pr.mu.Unlock()
	c.done <- answer{line: line}
	return true
}

// violation restarts the helper after an answer line that breaks the protocol: no later line
// can be trusted to be what it claims, so every call in flight fails with reason.
func (pr *process) violation(reason error) {
	pr.stop(fmt.Errorf("%w after an invalid answer line: %w", ErrRestarted, reason))
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
	waiting := pr.inFlight
	pr.inFlight = nil
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
