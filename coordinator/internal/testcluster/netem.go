// SPDX-License-Identifier: Apache-2.0

package testcluster

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/testkit/proxy"
)

// Netem is a set of TCP proxies, one per direction between two members, so a test can cut a
// member off and heal it while Raft runs its real transport.
type Netem struct {
	mu      sync.Mutex
	names   map[string]string // raft address -> member id
	proxies map[string]*link  // "from>addr"
	blocked map[string]bool
}

// link is the proxy from one member to another's raft address.
type link struct {
	*proxy.Proxy
	from, to string
}

func newNetem(t testing.TB) *Netem {
	n := &Netem{names: map[string]string{}, proxies: map[string]*link{}, blocked: map[string]bool{}}
	t.Cleanup(n.close)
	return n
}

func (n *Netem) name(addr, id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.names[addr] = id
}

func (n *Netem) dialer(from string) func(string, time.Duration) (net.Conn, error) {
	return func(addr string, timeout time.Duration) (net.Conn, error) {
		l, err := n.link(from, addr)
		if err != nil {
			return nil, err
		}
		return net.DialTimeout("tcp", l.Addr(), timeout)
	}
}

func (n *Netem) link(from, addr string) (*link, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	key := from + ">" + addr
	if l, ok := n.proxies[key]; ok {
		return l, nil
	}
	l := &link{from: from, to: n.names[addr]}
	p, err := proxy.New(proxy.Options{Name: key, Target: addr})
	if err != nil {
		return nil, err
	}
	l.Proxy = p
	if n.blocked[l.from] || n.blocked[l.to] {
		p.Partition()
	}
	n.proxies[key] = l
	return l, nil
}

// Partition cuts every link to and from member id, including open connections.
func (n *Netem) Partition(id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.blocked[id] = true
	for _, l := range n.proxies {
		if l.from == id || l.to == id {
			l.Partition()
		}
	}
}

// Heal restores the links of member id whose other end is not cut off too.
func (n *Netem) Heal(id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.blocked, id)
	for _, l := range n.proxies {
		if (l.from == id || l.to == id) && !n.blocked[l.from] && !n.blocked[l.to] {
			l.Heal()
		}
	}
}

func (n *Netem) close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, l := range n.proxies {
		l.Close()
	}
}
