// SPDX-License-Identifier: Apache-2.0

// Package loopback finds free loopback ports for the processes tests and the sandbox start.
package loopback

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// Addr is a loopback host:port the kernel had free a moment ago, for a child to bind once.
func Addr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Port is Addr's port.
func Port() (int, error) { return portOf(Addr()) }

// StableAddr is a free loopback host:port below the system's ephemeral range, for an address a
// process must bind again after a restart (a member's Raft or API address, an edge's monitor):
// a port of the ephemeral range is handed to any outgoing connection while its owner is down,
// and the restart then finds it taken. It falls back to Addr when no such port is free.
func StableAddr() (string, error) {
	low := ephemeralLow()
	from := max(low-12000, 10000)
	for range 200 {
		addr := fmt.Sprintf("127.0.0.1:%d", from+rand.IntN(low-from))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		l.Close()
		return addr, nil
	}
	return Addr()
}

// StablePort is StableAddr's port.
func StablePort() (int, error) { return portOf(StableAddr()) }

// portOf is the port of a host:port an address finder returned (or its error).
func portOf(addr string, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, fmt.Errorf("free loopback port %s: %w", addr, err)
	}
	return strconv.Atoi(port)
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
