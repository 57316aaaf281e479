// SPDX-License-Identifier: Apache-2.0

package raftnode

import (
	"net"
	"time"
)

// Deadlines of accepted Raft connections: a peer must complete the TLS handshake and send its
// first request within handshakeTimeout, and a connection that carries nothing for idleTimeout is
// closed, so connections that never speak do not pile up (the API port closes idle ones at 10 s).
// Idle is long because raft keeps pooled connections open between bursts of replication; a pooled
// connection closed here is redialled by raft on its next use.
const (
	handshakeTimeout = 10 * time.Second
	idleTimeout      = 10 * time.Minute
)

// deadlineListener gives every accepted connection the handshake deadline, then the idle one.
type deadlineListener struct {
	net.Listener
	handshake, idle time.Duration
}

func (l deadlineListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if err := c.SetDeadline(time.Now().Add(l.handshake)); err != nil {
		c.Close()
		return nil, err
	}
	return &idleConn{Conn: c, idle: l.idle}, nil
}

// idleConn moves its read deadline on after reads that carried data, at most every tenth of the
// idle time: replication reads continuously, and resetting the deadline's timer at every read
// would cost each one a clock read and a timer update. The handshake deadline also bounded writes
// until the first request arrived; from then on writes have none, as raft's own transport sets
// per-request deadlines on the side that waits for an answer.
type idleConn struct {
	net.Conn
	idle  time.Duration
	spoke bool
	// moved is when the read deadline was last moved.
	moved time.Time
}

func (c *idleConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		if !c.spoke {
			c.spoke = true
			if werr := c.Conn.SetWriteDeadline(time.Time{}); werr != nil && err == nil {
				err = werr
			}
		}
		if now := time.Now(); now.Sub(c.moved) >= c.idle/10 {
			c.moved = now
			if derr := c.Conn.SetReadDeadline(now.Add(c.idle)); derr != nil && err == nil {
				err = derr
			}
		}
	}
	return n, err
}
