// SPDX-License-Identifier: Apache-2.0

package raftnode

import (
	"crypto/tls"
	"fmt"
	"log/slog"
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

// newStreamLayer listens on bind; with tlsConf every connection, accepted or dialled, is mutual
// TLS whose peer certificate must carry memberName (memberTLS).
func newStreamLayer(bind, advertise string, dial func(string, time.Duration) (net.Conn, error), tlsConf *tls.Config, memberName string, log *slog.Logger) (*streamLayer, error) {
	ln, err := net.Listen("tcp", bind)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", bind, err)
	}
	if tlsConf != nil {
		if len(tlsConf.Certificates) == 0 && tlsConf.GetCertificate == nil {
			ln.Close()
			return nil, fmt.Errorf("raft tls: no certificate configured")
		}
		tlsConf = memberTLS(tlsConf, memberName, log)
		ln = tls.NewListener(ln, tlsConf)
	}
	ln = deadlineListener{Listener: ln, handshake: handshakeTimeout, idle: idleTimeout}
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
	if tlsConf != nil {
		plain := dial
		dial = func(address string, timeout time.Duration) (net.Conn, error) {
			return dialTLS(plain, tlsConf, address, timeout)
		}
	}
	return &streamLayer{Listener: ln, advertise: adv, dial: dial}, nil
}

// dialTLS opens a connection with dial and runs the client handshake within timeout; members
// present their own certificate as client certificate, so each side verifies the other.
func dialTLS(dial func(string, time.Duration) (net.Conn, error), conf *tls.Config, address string, timeout time.Duration) (net.Conn, error) {
	start := time.Now()
	raw, err := dial(address, timeout)
	if err != nil {
		return nil, err
	}
	c := conf.Clone()
	if c.ServerName == "" {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			raw.Close()
			return nil, fmt.Errorf("raft tls dial %s: %w", address, err)
		}
		c.ServerName = host
	}
	conn := tls.Client(raw, c)
	if err := conn.SetDeadline(start.Add(timeout)); err != nil {
		raw.Close()
		return nil, err
	}
	if err := conn.Handshake(); err != nil {
		raw.Close()
		return nil, fmt.Errorf("raft tls handshake with %s: %w", address, err)
	}
	if err := conn.SetDeadline(time.Time{}); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// Dial opens an outgoing connection to a member.
func (s *streamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return s.dial(string(address), timeout)
}

// Addr is the advertised address, which raft stores in the configuration.
func (s *streamLayer) Addr() net.Addr { return s.advertise }
