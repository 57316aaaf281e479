// SPDX-License-Identifier: Apache-2.0

package monitor_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge/monitor"
)

// serve runs the monitor's server with limits l on a loopback port and returns its address.
func serve(t *testing.T, l monitor.Limits) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, ln, err := monitor.Server(ln, monitor.Handler(&fakeEdge{}, http.NotFoundHandler(), ""), l)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return ln.Addr().String()
}

// client is one raw keep-alive connection to the monitor port.
type client struct {
	net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, addr string) *client {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{Conn: c, r: bufio.NewReader(c)}
}

// send writes a keep-alive GET /healthz.
func (c *client) send(t *testing.T) {
	t.Helper()
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: monitor\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
}

// answer reads the answer to send by deadline.
func (c *client) answer(deadline time.Time) error {
	_ = c.SetReadDeadline(deadline)
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}

// closedBy is nil once the server closed c, waiting for it until deadline.
func (c *client) closedBy(deadline time.Time) error {
	_ = c.SetReadDeadline(deadline)
	_, err := c.r.ReadByte()
	if err == nil {
		return errors.New("read a byte nobody asked for")
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	return nil // EOF or reset: the server closed it
}

// TestServer_ClosesIdleConnections: 64 connections that asked once and then keep quiet, and 64
// that never send a byte, are all closed by the server after its idle and header timeouts.
func TestServer_ClosesIdleConnections(t *testing.T) {
	l := monitor.DefaultLimits()
	l.Idle, l.ReadHeader, l.MaxConns = 200*time.Millisecond, 200*time.Millisecond, 256
	addr := serve(t, l)
	var asked, silent []*client
	for range 64 {
		c := dial(t, addr)
		c.send(t)
		if err := c.answer(time.Now().Add(10 * time.Second)); err != nil {
			t.Fatalf("healthz: %v", err)
		}
		asked = append(asked, c)
		silent = append(silent, dial(t, addr))
	}
	// Long enough for a loaded machine; the server's timeouts are 200ms.
	deadline := time.Now().Add(10 * time.Second)
	for what, conns := range map[string][]*client{"idle after a request": asked, "silent": silent} {
		for i, c := range conns {
			if err := c.closedBy(deadline); err != nil {
				t.Fatalf("%s connection %d of %d still open 10s on (timeouts %s idle, %s header): %v", what, i+1, len(conns), l.Idle, l.ReadHeader, err)
			}
		}
	}
}

// TestServer_HoldsAtMostMaxConns: a connection beyond the cap waits, unanswered, until a held
// one ends.
func TestServer_HoldsAtMostMaxConns(t *testing.T) {
	l := monitor.DefaultLimits()
	l.MaxConns, l.Idle = 4, time.Minute
	addr := serve(t, l)
	var held []*client
	for range l.MaxConns {
		c := dial(t, addr)
		c.send(t)
		if err := c.answer(time.Now().Add(10 * time.Second)); err != nil {
			t.Fatalf("healthz: %v", err)
		}
		held = append(held, c)
	}
	extra := dial(t, addr)
	extra.send(t)
	// The one bounded wait for something not to happen: an answer within it means no cap.
	if err := extra.answer(time.Now().Add(300 * time.Millisecond)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("connection %d of a cap of %d: answered (%v), want it to wait", l.MaxConns+1, l.MaxConns, err)
	}
	held[0].Close()
	if err := extra.answer(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatalf("the waiting connection after a held one ended: %v", err)
	}
}

func TestLimits_ValidateNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		field string
		set   func(*monitor.Limits)
	}{
		{"ReadHeader", func(l *monitor.Limits) { l.ReadHeader = 0 }},
		{"Read", func(l *monitor.Limits) { l.Read = -time.Second }},
		{"Write", func(l *monitor.Limits) { l.Write = 0 }},
		{"Idle", func(l *monitor.Limits) { l.Idle = 0 }},
		{"MaxConns", func(l *monitor.Limits) { l.MaxConns = 0 }},
	} {
		l := monitor.DefaultLimits()
		tc.set(&l)
		err := l.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: %v, want an error naming it", tc.field, err)
		}
	}
}
