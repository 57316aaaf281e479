// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"errors"
	"fmt"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

type kind int

const (
	kindAcquire kind = iota
	kindRenew
	kindReport
	kindRegister
	kindHeartbeat
	kindPause
	kindOperator
)

func (k kind) String() string {
	return [...]string{"acquire", "renew", "report", "register", "heartbeat", "pause", "operator"}[k]
}

// message is one request or answer between a caller (edge or operator) and a member.
type message struct {
	from, to int
	// fromInc and toInc are the caller's incarnation: a restarted edge ignores answers to its
	// previous run.
	fromInc, toInc int
	kind           kind
	call           uint64
	attempt        int
	reply          bool
	req            any
	resp           any
	err            *api.Error
	// seen is where in the log the answering member was when it answered.
	seen logPos
}

// logPos is a place in the log's history: the number of recovers before it (each starts a new
// history whose indices may repeat those the lost majority reached), then the applied index.
type logPos struct {
	recovers int
	index    uint64
}

// atOrAfter says whether p is at or after o.
func (p logPos) atOrAfter(o logPos) bool {
	return p.recovers > o.recovers || p.recovers == o.recovers && p.index >= o.index
}

// network delivers messages between processes (members first, then edges, then the operator)
// with latency, loss, duplication and reordering, and cuts the pairs a partition separates.
type network struct {
	s    *Sim
	cut  [][]int // >0: the pair is cut (by that many partitions at once)
	drop float64
	dup  float64
	// late is the chance a message takes seconds to minutes (a stuck proxy, a retransmit storm).
	late float64
	// slowUntil makes every message to or from a process late until then (fault_late.go).
	slowUntil []int64
	recv      []func(*message)
}

func newNetwork(s *Sim, procs int) *network {
	n := &network{s: s, cut: make([][]int, procs), slowUntil: make([]int64, procs), recv: make([]func(*message), procs)}
	for i := range n.cut {
		n.cut[i] = make([]int, procs)
	}
	return n
}

func (n *network) isCut(a, b int) bool { return n.cut[a][b] > 0 }

// setCut cuts (or, with on false, heals one cut of) the link between a and b, both ways.
func (n *network) setCut(a, b int, on bool) {
	d := 1
	if !on {
		d = -1
	}
	n.cut[a][b] = max(n.cut[a][b]+d, 0)
	n.cut[b][a] = max(n.cut[b][a]+d, 0)
}

func (n *network) healAll() {
	for i := range n.cut {
		clear(n.cut[i])
	}
	clear(n.slowUntil)
}

func (n *network) latency(m *message) time.Duration {
	s := n.s
	d := s.between(200*time.Microsecond, 2*time.Millisecond) + s.expo(2*time.Millisecond) + s.wanDelay(m.from, m.to)
	if s.now < n.slowUntil[m.from] || s.now < n.slowUntil[m.to] || s.chance(n.late) {
		d += s.between(5*time.Second, 3*time.Minute)
	}
	return d
}

// send delivers m after its latency unless it is lost; maybe twice.
func (n *network) send(m *message) {
	s := n.s
	if n.isCut(m.from, m.to) || s.chance(n.drop) {
		return
	}
	copies := 1
	if s.chance(n.dup) {
		copies = 2
	}
	for range copies {
		s.after(n.latency(m), func() {
			if !n.isCut(m.from, m.to) {
				n.recv[m.to](m)
			}
		})
	}
}

// caller is api.Client's retry loop: one call goes to the member it believes leads, follows a
// not-leader answer's hint, moves to the next member on no answer within the attempt timeout,
// pauses between rounds, and keeps its request (and so its request id) over every attempt.
type caller struct {
	p      *proc
	leader int
	next   uint64
	calls  map[uint64]*call
}

type call struct {
	id       uint64
	kind     kind
	req      any
	timeout  time.Duration
	deadline int64 // 0: none
	max      int   // attempts; 0: until the deadline
	tries    int
	queue    []int
	delay    time.Duration
	attempt  int
	lastErr  error
	done     func(resp any, seen logPos, err error)
}

func newCaller(p *proc) *caller { return &caller{p: p, leader: -1, calls: map[uint64]*call{}} }

// reset forgets every call: the process restarted.
func (c *caller) reset() { c.calls, c.leader = map[uint64]*call{}, -1 }

func (c *caller) candidates() []int {
	members := len(c.p.s.members)
	out := make([]int, 0, members)
	if c.leader >= 0 {
		out = append(out, c.leader)
	}
	for i := range members {
		if i != c.leader {
			out = append(out, i)
		}
	}
	return out
}

// start makes a call; done gets the answer, the last error, or errGaveUp.
func (c *caller) start(k kind, req any, timeout time.Duration, deadline int64, max int, done func(resp any, seen logPos, err error)) {
	c.next++
	cl := &call{id: c.next, kind: k, req: req, timeout: timeout, deadline: deadline, max: max, delay: 250 * time.Millisecond, done: done}
	c.calls[cl.id] = cl
	cl.queue = c.candidates()
	c.try(cl)
}

var errGaveUp = errors.New("gave up")

func (c *caller) finish(cl *call, resp any, seen logPos, err error) {
	if _, ok := c.calls[cl.id]; !ok {
		return
	}
	delete(c.calls, cl.id)
	cl.done(resp, seen, err)
}

func (c *caller) try(cl *call) {
	s := c.p.s
	if cl.deadline > 0 && s.now >= cl.deadline || cl.max > 0 && cl.tries >= cl.max {
		c.finish(cl, nil, logPos{}, fmt.Errorf("%s %w after %d attempts: %w", cl.kind, errGaveUp, cl.tries, cl.lastErr))
		return
	}
	if len(cl.queue) == 0 {
		d := cl.delay
		cl.delay = min(2*cl.delay, 2*time.Second)
		cl.queue = c.candidates()
		c.p.after(d, func() { c.try(cl) })
		return
	}
	to := cl.queue[0]
	cl.queue = cl.queue[1:]
	cl.tries++
	cl.attempt++
	a := cl.attempt
	s.net.send(&message{from: c.p.id, to: to, fromInc: c.p.inc, kind: cl.kind, call: cl.id, attempt: a, req: cl.req})
	wait := cl.timeout
	if cl.deadline > 0 {
		wait = min(wait, time.Duration(cl.deadline-s.now))
	}
	c.p.after(wait, func() {
		if _, ok := c.calls[cl.id]; ok && cl.attempt == a {
			cl.lastErr = fmt.Errorf("%s to m%d: no answer within %s", cl.kind, to, wait)
			if c.leader == to {
				c.leader = -1
			}
			c.try(cl)
		}
	})
}

// answer takes a member's reply to the current attempt of a call; others are stale.
func (c *caller) answer(m *message) {
	cl, ok := c.calls[m.call]
	if !ok || m.attempt != cl.attempt {
		return
	}
	if m.err == nil {
		c.leader = m.from
		c.finish(cl, m.resp, m.seen, nil)
		return
	}
	cl.lastErr = m.err
	if !retryable(m.err) {
		c.finish(cl, nil, m.seen, m.err)
		return
	}
	if h := memberIndex(m.err.Leader); h >= 0 && h != m.from {
		c.leader = h
		cl.queue = append([]int{h}, without(cl.queue, h)...)
	} else if c.leader == m.from {
		c.leader = -1
	}
	cl.attempt++ // the answered attempt's timeout no longer applies
	c.try(cl)
}

// retryable is api.Client's: another member or a later try may answer differently.
func retryable(e *api.Error) bool {
	switch e.Code {
	case api.CodeNotLeader, api.CodeNoLeader, api.CodeUnavailable:
		return true
	}
	return e.Status == 502 || e.Status == 503 || e.Status == 504
}

func memberIndex(name string) int {
	var i int
	if _, err := fmt.Sscanf(name, "m%d", &i); err != nil {
		return -1
	}
	return i
}

func without(xs []int, x int) []int {
	out := xs[:0:0]
	for _, y := range xs {
		if y != x {
			out = append(out, y)
		}
	}
	return out
}

// proc is what edges and the operator share: a process that may be stopped (SIGSTOP) or
// killed, whose events wait while it is stopped and vanish with its incarnation.
type proc struct {
	s            *Sim
	id           int
	name         string
	inc          int
	alive        bool
	stoppedUntil int64
}

// after runs fn in d if this incarnation still lives, once the process is not stopped.
func (p *proc) after(d time.Duration, fn func()) {
	inc := p.inc
	p.s.after(d, func() { p.run(inc, fn) })
}

func (p *proc) run(inc int, fn func()) {
	if !p.alive || p.inc != inc {
		return
	}
	if p.stoppedUntil > p.s.now {
		p.s.at(p.stoppedUntil, func() { p.run(inc, fn) })
		return
	}
	fn()
}

// who names the incarnation in traces: e2#1 is edge e2's second run.
func (p *proc) who() string { return fmt.Sprintf("%s#%d", p.name, p.inc) }
