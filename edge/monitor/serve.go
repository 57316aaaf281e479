// SPDX-License-Identifier: Apache-2.0

package monitor

import (
	"fmt"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
)

// Limits bound what the monitor port's clients may hold: without them a client that opened
// connections and kept quiet held each one, and its goroutine, for ever.
type Limits struct {
	// ReadHeader bounds how long a request's header may take to arrive.
	ReadHeader time.Duration
	// Read bounds how long a whole request may take to arrive.
	Read time.Duration
	// Write bounds how long an answer may take to be written (a client that stops reading).
	Write time.Duration
	// Idle closes a keep-alive connection after this long without a request.
	Idle time.Duration
	// MaxConns is how many connections are served at once; more wait to be accepted.
	MaxConns int
}

// DefaultLimits are the limits of the edge's monitor port: ample for Prometheus, probes and an
// operator, a scrape on a loaded edge included.
func DefaultLimits() Limits {
	return Limits{ReadHeader: 5 * time.Second, Read: 10 * time.Second, Write: 30 * time.Second, Idle: 30 * time.Second, MaxConns: 64}
}

// Validate refuses a limit that would leave connections unbounded, naming the field.
func (l Limits) Validate() error {
	for _, d := range []struct {
		field string
		v     time.Duration
	}{{"ReadHeader", l.ReadHeader}, {"Read", l.Read}, {"Write", l.Write}, {"Idle", l.Idle}} {
		if d.v <= 0 {
			return fmt.Errorf("monitor: %s is %s, want a positive duration", d.field, d.v)
		}
	}
	if l.MaxConns < 1 {
		return fmt.Errorf("monitor: MaxConns is %d, want at least 1", l.MaxConns)
	}
	return nil
}

// Server returns the http.Server for the endpoints h with l's timeouts, and ln wrapped to hand
// it at most l.MaxConns connections at once; serve the one on the other.
func Server(ln net.Listener, h http.Handler, l Limits) (*http.Server, net.Listener, error) {
	if err := l.Validate(); err != nil {
		return nil, nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: l.ReadHeader, ReadTimeout: l.Read, WriteTimeout: l.Write, IdleTimeout: l.Idle}
	return srv, netutil.LimitListener(ln, l.MaxConns), nil
}
