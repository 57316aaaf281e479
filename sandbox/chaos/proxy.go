// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// Proxy is a TCP forwarder on 127.0.0.1 in front of one address. A partition closes its
// connections and refuses new ones (accepted and closed at once, as a dropped SYN would end
// for a client with a short dial timeout); Block can also cut only the connections a filter
// picks, e.g. those a given process opened.
type Proxy struct {
	Name   string
	target string
	ln     net.Listener

	mu     sync.Mutex
	conns  map[*proxyConn]struct{}
	all    bool
	filter func(*proxyConn) bool
	origin func(remote *net.TCPAddr) string

	refused atomic.Int64
	wg      sync.WaitGroup
}

type proxyConn struct {
	client, server net.Conn
	origin         string // "" while the owner lookup has not found who opened it
}

// NewProxy listens on a free loopback port and forwards every connection to target. origin,
// when not nil, names who opened a connection from its client address, for Block's filter.
func NewProxy(name, target string, origin func(remote *net.TCPAddr) string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy %s: %w", name, err)
	}
	p := &Proxy{Name: name, target: target, ln: ln, conns: map[*proxyConn]struct{}{}, origin: origin}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is host:port clients should dial.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Refused counts connections cut or refused by a partition.
func (p *Proxy) Refused() int64 { return p.refused.Load() }

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		pc := &proxyConn{client: c}
		p.resolve(pc)
		p.mu.Lock()
		blocked := p.all || (p.filter != nil && p.filter(pc))
		if !blocked {
			p.conns[pc] = struct{}{}
		}
		p.mu.Unlock()
		if blocked {
			p.refused.Add(1)
			c.Close()
			continue
		}
		p.wg.Add(1)
		go p.serve(pc)
	}
}

func (p *Proxy) serve(pc *proxyConn) {
	defer p.wg.Done()
	defer func() {
		p.mu.Lock()
		delete(p.conns, pc)
		p.mu.Unlock()
		pc.client.Close()
		if pc.server != nil {
			pc.server.Close()
		}
	}()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	p.mu.Lock()
	_, live := p.conns[pc]
	if live {
		pc.server = s
	}
	p.mu.Unlock()
	if !live {
		s.Close()
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(s, pc.client)
	go pipe(pc.client, s)
	<-done // either side ending ends both (the deferred closes unblock the other copy)
}

// Partition cuts every connection and refuses new ones until Heal.
func (p *Proxy) Partition() { p.Block(nil) }

// resolve looks up who opened pc, unless that is known already.
func (p *Proxy) resolve(pc *proxyConn) {
	if p.origin == nil || pc.origin != "" {
		return
	}
	if ta, ok := pc.client.RemoteAddr().(*net.TCPAddr); ok {
		pc.origin = p.origin(ta)
	}
}

// Block cuts and refuses the connections filter picks; nil picks all. A connection whose origin
// is still unknown (the lookup missed at accept: a process just restarted) is looked up again
// before filter sees it, with "" if it stays unknown.
func (p *Proxy) Block(filter func(origin string) bool) {
	p.mu.Lock()
	if filter == nil {
		p.all = true
	} else {
		p.filter = func(pc *proxyConn) bool {
			p.resolve(pc)
			return filter(pc.origin)
		}
	}
	var cut []*proxyConn
	for pc := range p.conns {
		if p.all || p.filter(pc) {
			cut = append(cut, pc)
			delete(p.conns, pc)
		}
	}
	p.mu.Unlock()
	for _, pc := range cut {
		p.refused.Add(1)
		pc.client.Close()
		if pc.server != nil {
			pc.server.Close()
		}
	}
}

// Heal lets every connection through again.
func (p *Proxy) Heal() {
	p.mu.Lock()
	p.all, p.filter = false, nil
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
