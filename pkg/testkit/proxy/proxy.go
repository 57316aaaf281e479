// SPDX-License-Identifier: Apache-2.0

// Package proxy is the one TCP proxy of Muster's tests and of the chaos runner: a forwarder on
// 127.0.0.1 whose links a test cuts and heals (a partition), wholly or only for the connections
// a filter picks. Blocks are named and independent, so faults that overlap on one proxy each
// lift only their own. It depends on the standard library only, so the coordinator's in-process
// tests, the sandbox suites and the chaos runner all use it.
//
// A link may also have a one-way delay with jitter (Options.Latency, by who opened the
// connection), so one loopback models datacenters tens of milliseconds apart.
package proxy

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Options says what a Proxy forwards to and how it tells connections apart.
type Options struct {
	// Name names the proxy in errors.
	Name string
	// Target is the address every connection is forwarded to; "" refuses connections until
	// SetTarget names one.
	Target string
	// Origin, when not nil, names who opened a connection from its client address, for the
	// filters of Block.
	Origin func(remote *net.TCPAddr) string
	// DialTimeout bounds the dial of the target for each connection; 2s when 0.
	DialTimeout time.Duration
	// Latency, when not nil, is the one-way delay of a connection by its origin (as Origin named
	// it, "" when unknown), applied to both directions: a round trip through the proxy takes
	// twice it. Nil forwards at once.
	Latency func(origin string) Latency
	// Jitter draws a duration in [0, max] for Latency's jitter; nil draws none.
	Jitter func(max time.Duration) time.Duration
}

// Proxy is a TCP forwarder on 127.0.0.1 in front of one address. A partition closes its
// connections and refuses new ones (accepted and closed at once, as a dropped SYN would end
// for a client with a short dial timeout); a named Block can also cut only the connections a
// filter picks, e.g. those a given process opened. A connection passes only while neither
// Partition nor any block picks it.
type Proxy struct {
	opts Options
	ln   net.Listener

	mu          sync.Mutex
	target      string
	conns       map[*conn]struct{}
	partitioned bool
	// blocks are the named blocks by name; a nil filter picks every connection.
	blocks map[string]func(origin string) bool

	refused atomic.Int64
	wg      sync.WaitGroup
}

type conn struct {
	client, server net.Conn
	origin         string // "" while the owner lookup has not found who opened it
	// ended is closed with the connection: a delayed copy stops holding bytes for it.
	ended   chan struct{}
	endOnce sync.Once
}

// New listens on a free loopback port and forwards every connection to o.Target.
func New(o Options) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy %s: %w", o.Name, err)
	}
	o.DialTimeout = cmp.Or(o.DialTimeout, 2*time.Second)
	p := &Proxy{opts: o, ln: ln, target: o.Target, conns: map[*conn]struct{}{}, blocks: map[string]func(string) bool{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is host:port clients should dial.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Refused counts connections cut or refused by a partition or a block.
func (p *Proxy) Refused() int64 { return p.refused.Load() }

// SetTarget forwards new connections to target ("" refuses them) and ends the open ones, which
// led to the old target: a restarted member on a new port behind a fixed advertised address.
func (p *Proxy) SetTarget(target string) {
	p.mu.Lock()
	p.target = target
	cut := p.takeLocked(func(*conn) bool { return true })
	p.mu.Unlock()
	for _, c := range cut {
		c.close()
	}
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		pc := &conn{client: c, ended: make(chan struct{})}
		p.resolve(pc)
		p.mu.Lock()
		target := p.target
		blocked := p.blockedLocked(pc)
		if !blocked && target != "" {
			p.conns[pc] = struct{}{}
		}
		p.mu.Unlock()
		if blocked || target == "" {
			if blocked {
				p.refused.Add(1)
			}
			c.Close()
			continue
		}
		p.wg.Add(1)
		go p.serve(pc, target)
	}
}

func (p *Proxy) serve(pc *conn, target string) {
	defer p.wg.Done()
	defer func() {
		p.mu.Lock()
		delete(p.conns, pc)
		p.mu.Unlock()
		pc.close()
	}()
	s, err := net.DialTimeout("tcp", target, p.opts.DialTimeout)
	if err != nil {
		return
	}
	// A partition or a new target that came while this connection was being dialled has
	// already ended the open ones: this one must not slip through it.
	// The origin is read under the lock too: a Block may look it up again meanwhile.
	p.mu.Lock()
	_, live := p.conns[pc]
	origin := pc.origin
	if live {
		pc.server = s
	}
	p.mu.Unlock()
	if !live {
		s.Close()
		return
	}
	done := make(chan struct{}, 2)
	var lat Latency
	if p.opts.Latency != nil {
		lat = p.opts.Latency(origin)
	}
	jitter := p.opts.Jitter
	if jitter == nil {
		jitter = func(time.Duration) time.Duration { return 0 }
	}
	pipe := func(dst, src net.Conn) {
		if lat == (Latency{}) {
			_, _ = io.Copy(dst, src)
		} else {
			delayedCopy(dst, src, lat, jitter, pc.ended)
		}
		done <- struct{}{}
	}
	go pipe(s, pc.client)
	go pipe(pc.client, s)
	<-done // either side ending ends both (the deferred closes unblock the other copy)
}

// Partition cuts every connection and refuses new ones until Heal. It is apart from the named
// blocks: Heal does not lift them, nor Unblock it.
func (p *Proxy) Partition() {
	p.mu.Lock()
	p.partitioned = true
	cut := p.takeLocked(func(*conn) bool { return true })
	p.mu.Unlock()
	p.cut(cut)
}

// resolve looks up who opened pc, unless that is known already.
func (p *Proxy) resolve(pc *conn) {
	if p.opts.Origin == nil || pc.origin != "" {
		return
	}
	if ta, ok := pc.client.RemoteAddr().(*net.TCPAddr); ok {
		pc.origin = p.opts.Origin(ta)
	}
}

// Block cuts and refuses the connections filter picks (nil picks all) until Unblock(name); a
// block already called name is replaced, every other one stays. A connection whose origin is
// still unknown (the lookup missed at accept: a process just restarted) is looked up again
// before filter sees it, with "" if it stays unknown.
func (p *Proxy) Block(name string, filter func(origin string) bool) {
	p.mu.Lock()
	p.blocks[name] = filter
	cut := p.takeLocked(p.blockedLocked)
	p.mu.Unlock()
	p.cut(cut)
}

// Unblock lifts the block called name (none: nothing changes); the others and a Partition stay.
func (p *Proxy) Unblock(name string) {
	p.mu.Lock()
	delete(p.blocks, name)
	p.mu.Unlock()
}

// blockedLocked reports whether a Partition or any block picks pc; its origin is looked up
// again first while unknown, so a filter sees who opened it if that can be found by now.
func (p *Proxy) blockedLocked(pc *conn) bool {
	if p.partitioned {
		return true
	}
	if len(p.blocks) == 0 {
		return false
	}
	p.resolve(pc)
	for _, filter := range p.blocks {
		if filter == nil || filter(pc.origin) {
			return true
		}
	}
	return false
}

// cut closes connections a partition or a block took, counting each as refused.
func (p *Proxy) cut(conns []*conn) {
	for _, pc := range conns {
		p.refused.Add(1)
		pc.close()
	}
}

// takeLocked removes the open connections pick chooses and returns them for closing.
func (p *Proxy) takeLocked(pick func(*conn) bool) []*conn {
	var out []*conn
	for pc := range p.conns {
		if pick(pc) {
			out = append(out, pc)
			delete(p.conns, pc)
		}
	}
	return out
}

func (c *conn) close() {
	c.endOnce.Do(func() { close(c.ended) })
	c.client.Close()
	if c.server != nil {
		c.server.Close()
	}
}

// Heal lifts Partition; the named blocks stay until their Unblock.
func (p *Proxy) Heal() {
	p.mu.Lock()
	p.partitioned = false
	p.mu.Unlock()
}

// Close stops listening and ends every connection.
func (p *Proxy) Close() error {
	err := p.ln.Close()
	p.Partition()
	p.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
