// SPDX-License-Identifier: Apache-2.0

package raftnode

import (
	"fmt"
	"net"
	"time"

	"github.com/hashicorp/raft"
)

// streamLayer is raft's TCP stream layer with a replaceable dialer.
type streamLayer struct {
	net.Listener
	advertise net.Addr
	dial      func(address string, timeout time.Duration) (net.Conn, error)
}

var _ raft.StreamLayer = (*streamLayer)(nil)

func newStreamLayer(bind, advertise string, dial func(string, time.Duration) (net.Conn, error)) (*streamLayer, error) {
	ln, err := net.Listen("tcp", bind)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", bind, err)
	}
	var adv net.Addr = ln.Addr()
	if advertise != "" {
		a, err := net.ResolveTCPAddr("tcp", advertise)
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("advertise address %q: %w", advertise, err)
		}
		if a.IP == nil || a.IP.IsUnspecified() {
			ln.Close()
			return nil, fmt.Errorf("advertise address %q: not a dialable address", advertise)
		}
		adv = a
	}
	if dial == nil {
		dial = func(address string, timeout time.Duration) (net.Conn, error) {
			return net.DialTimeout("tcp", address, timeout)
		}
	}
	return &streamLayer{Listener: ln, advertise: adv, dial: dial}, nil
}

// Dial opens an outgoing connection to a member.
func (s *streamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return s.dial(string(address), timeout)
}

// Addr is the advertised address, which raft stores in the configuration.
func (s *streamLayer) Addr() net.Addr { return s.advertise }
