// SPDX-License-Identifier: Apache-2.0

package testkit

import (
	"io"
	"net"
	"testing"

	"github.com/seed96588659/muster/pkg/loopback"
)

// FreePort is a port on 127.0.0.1 nothing listens on right now, for a child process to bind.
// Another process may take it before the child does; callers that start children retry.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// StablePort returns a free TCP port on 127.0.0.1 below the system's ephemeral range, for an
// address a test must bind again after a restart (loopback.StableAddr says why).
func StablePort(t testing.TB) int {
	t.Helper()
	port, err := loopback.StablePort()
	if err != nil {
		t.Fatalf("stable port: %v", err)
	}
	return port
}

// Echo listens on 127.0.0.1 until the test ends and answers every connection with what it sends,
// for tests of what lies between a client and a server (the proxies, the chaos runner's links).
func Echo(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("echo server: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}
