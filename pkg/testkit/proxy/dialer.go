// SPDX-License-Identifier: Apache-2.0

package proxy

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"
)

// Dialer dials every address through a Proxy of its own, made on first use, so that a test can
// cut a client off from everything it reaches (Partition) and heal it, while the client keeps
// its configured addresses.
type Dialer struct {
	// Name prefixes the proxies' names.
	Name string
	// Latency, when not nil, is the one-way delay of the link to addr (a client in another
	// datacenter than the address it dials); nil forwards at once.
	Latency func(addr string) Latency
	// Jitter draws a duration in [0, max] for Latency's jitter; nil draws none.
	Jitter func(max time.Duration) time.Duration

	mu      sync.Mutex
	proxies map[string]*Proxy
	cut     bool
	closed  bool
}

// DialContext dials addr through its proxy; network must be TCP.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	p, err := d.Proxy(addr)
	if err != nil {
		return nil, err
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, p.Addr())
}

// Proxy is the proxy in front of addr, made (and partitioned, while the dialer is) on first use.
func (d *Dialer) Proxy(addr string) (*Proxy, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, fmt.Errorf("dialer %s: closed", d.Name)
	}
	if p := d.proxies[addr]; p != nil {
		return p, nil
	}
	o := Options{Name: d.Name + ">" + addr, Target: addr, Jitter: d.Jitter}
	if d.Latency != nil {
		lat := d.Latency(addr)
		o.Latency = func(string) Latency { return lat }
	}
	p, err := New(o)
	if err != nil {
		return nil, err
	}
	if d.cut {
		p.Partition()
	}
	if d.proxies == nil {
		d.proxies = map[string]*Proxy{}
	}
	d.proxies[addr] = p
	return p, nil
}

// Partition cuts every connection the dialer made and refuses new ones until Heal.
func (d *Dialer) Partition() {
	for _, p := range d.set(true) {
		p.Partition()
	}
}

// Heal lets the dialer's connections through again.
func (d *Dialer) Heal() {
	for _, p := range d.set(false) {
		p.Heal()
	}
}

// Close closes every proxy the dialer made; dialing through it fails afterwards.
func (d *Dialer) Close() error {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	var first error
	for _, p := range d.set(true) {
		if err := p.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// set records whether the dialer is cut and returns its proxies.
func (d *Dialer) set(cut bool) []*Proxy {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cut = cut
	out := make([]*Proxy, 0, len(d.proxies))
	for _, p := range d.proxies {
		out = append(out, p)
	}
	return out
}
