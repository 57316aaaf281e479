// SPDX-License-Identifier: Apache-2.0

package helper

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// firstRestartDelay and maxRestartDelay bound the backoff between starts of a helper that keeps dying.
	firstRestartDelay = 50 * time.Millisecond
	maxRestartDelay   = 5 * time.Second
	// closeGrace is how long Close waits for the helper to exit on EOF before killing it.
	closeGrace = 2 * time.Second
)

// Persistent keeps one helper process and exchanges one JSON line per request with it (the
// line protocol in the package documentation). It is safe for concurrent use; requests are
// pipelined, and each answer is matched to its request by the id it echoes.
type Persistent struct {
	cmd *command
	ids atomic.Uint64

	mu sync.Mutex
	// proc serves new requests; nil before the first Run and once it is stopping.
	proc *process
	// live holds every process not yet reaped, so Close can wait for all of them.
	live      map[*process]struct{}
	failures  int
	notBefore time.Time
	closed    bool
	closing   chan struct{}
}

// NewPersistent validates opts; the helper is started by the first Run.
func NewPersistent(opts Options) (*Persistent, error) {
	c, err := newCommand(opts)
	if err != nil {
		return nil, err
	}
	return &Persistent{cmd: c, live: map[*process]struct{}{}, closing: make(chan struct{})}, nil
}

// Run sends req to the helper and waits for its answer line.
func (p *Persistent) Run(ctx context.Context, req *Request) (*Response, error) {
	start := time.Now()
	defer p.cmd.observe(start)

	id := p.ids.Add(1)
	line, err := json.Marshal(requestLine{ID: id, Request: req})
	if err != nil {
		return nil, fmt.Errorf("helper %s: encode request for %s: %w", p.cmd.name, req.Identity, err)
	}
	line = append(line, '\n')

	tctx, cancel := context.WithTimeoutCause(ctx, p.cmd.Timeout, ErrTimeout)
	defer cancel()

	pr, err := p.current(tctx)
	if err != nil {
		return nil, err
	}
	c := &call{id: id, line: line, done: make(chan answer, 1)}
	select {
	case pr.calls <- c:
	case <-pr.quit:
		return nil, fmt.Errorf("helper %s: %w before the request was sent: %w", p.cmd.name, ErrRestarted, pr.stopCause())
	case <-tctx.Done():
		// not written: no answer can come for it
		return nil, p.doneErr(tctx)
	}

	select {
	case a := <-c.done:
		if a.err != nil {
			return nil, a.err
		}
		res, err := p.decode(a.line)
		if err != nil {
			return nil, err
		}
		if err := checkCertificate(p.cmd.name, req.Identity, res.Certificate); err != nil {
			return nil, err
		}
		return res, nil
	case <-tctx.Done():
		if errors.Is(context.Cause(tctx), ErrTimeout) {
			// a helper past its timeout is taken for hung, with every request it holds
			pr.stop(fmt.Errorf("%w: another request timed out after %s", ErrRestarted, p.cmd.Timeout))
		}
		// a caller that gave up stays in flight, so its answer is matched and dropped when it
		// comes instead of being refused as unknown
		return nil, p.doneErr(tctx)
	}
}

// Close stops the helper: its stdin is closed, and its process group is killed if it has not
// exited after a grace period. Requests in flight fail with ErrClosed.
func (p *Persistent) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.closing)
	p.proc = nil
	live := make([]*process, 0, len(p.live))
	for pr := range p.live {
		live = append(live, pr)
	}
	p.mu.Unlock()

	for _, pr := range live {
		pr.shutdown(ErrClosed)
	}
	grace := time.NewTimer(closeGrace)
	defer grace.Stop()
	for _, pr := range live {
		select {
		case <-pr.exited:
		case <-grace.C:
			// the timer fired once: every later process is killed at once
			pr.stop(ErrClosed)
			<-pr.exited
			grace.Reset(0)
		}
	}
	return nil
}

// requestLine is a Request with the id its answer must echo; the id comes first, where a
// helper finds it without parsing the rest.
type requestLine struct {
	ID uint64 `json:"id"`
	*Request
}

type answerLine struct {
	Response
	// Error fails this one request (line protocol only; Exec keeps choria-provisioner's exact format).
	Error string `json:"error"`
}

func (p *Persistent) decode(line []byte) (*Response, error) {
	var a answerLine
	if err := decode(p.cmd.name, line, &a); err != nil {
		return nil, err
	}
	if a.Error != "" {
		return nil, fmt.Errorf("helper %s: %w: %s", p.cmd.name, ErrFailed, truncate(p.cmd.redact(a.Error, false), maxStderrLine))
	}
	return &a.Response, nil
}

// doneErr explains why a request's context ended.
func (p *Persistent) doneErr(tctx context.Context) error {
	cause := context.Cause(tctx)
	if errors.Is(cause, ErrTimeout) {
		return fmt.Errorf("helper %s: %w after %s", p.cmd.name, ErrTimeout, p.cmd.Timeout)
	}
	return fmt.Errorf("helper %s: %w", p.cmd.name, cause)
}

// current returns the serving process, starting one when the backoff allows.
func (p *Persistent) current(ctx context.Context) (*process, error) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, fmt.Errorf("helper %s: %w", p.cmd.name, ErrClosed)
		}
		if p.proc != nil {
			pr := p.proc
			p.mu.Unlock()
			return pr, nil
		}
		wait := time.Until(p.notBefore)
		if wait <= 0 {
			pr, err := startProcess(p)
			if err != nil {
				p.failures++
				p.notBefore = time.Now().Add(restartDelay(p.failures))
				p.mu.Unlock()
				return nil, err
			}
			p.proc = pr
			p.live[pr] = struct{}{}
			p.mu.Unlock()
			return pr, nil
		}
		p.mu.Unlock()

		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, p.doneErr(ctx)
		case <-p.closing:
			t.Stop()
		}
	}
}

// detach stops pr from serving new requests and schedules the next start.
func (p *Persistent) detach(pr *process, answered bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.proc != pr {
		return
	}
	p.proc = nil
	if answered {
		p.failures = 0
	}
	p.failures++
	p.notBefore = time.Now().Add(restartDelay(p.failures))
}

// reaped forgets pr once its process was waited for.
func (p *Persistent) reaped(pr *process) {
	p.mu.Lock()
	delete(p.live, pr)
	p.mu.Unlock()
}

// restartDelay doubles from firstRestartDelay per consecutive failure, up to maxRestartDelay.
func restartDelay(failures int) time.Duration {
	d := firstRestartDelay
	for i := 1; i < failures && d < maxRestartDelay; i++ {
		d *= 2
	}
	return min(d, maxRestartDelay)
}
