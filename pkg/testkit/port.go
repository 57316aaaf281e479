// SPDX-License-Identifier: Apache-2.0

package testkit

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
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
// address a test must bind again after a restart (a member's Raft address, which the cluster's
// configuration names): a port of that range is handed to any outgoing connection while its
// owner is down, and the restart then finds it taken.
func StablePort(t testing.TB) int {
	t.Helper()
	low := ephemeralLow()
	from := max(low-12000, 10000)
	for range 200 {
		port := from + rand.IntN(low-from)
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		l.Close()
		return port
	}
	return FreePort(t)
}

// ephemeralLow is the first port of the system's ephemeral range (Linux's default when it
// cannot be read).
func ephemeralLow() int {
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 11000 {
				low = n
			}
		}
	}
	return low
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
