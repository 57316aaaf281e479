// SPDX-License-Identifier: Apache-2.0

// Package loopback finds free loopback ports for the processes the sandbox starts.
package loopback

import (
	"fmt"
	"net"
	"strconv"
)

// Addr is a loopback host:port the kernel had free a moment ago, for a child to bind.
func Addr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Port is Addr's port.
func Port() (int, error) {
	addr, err := Addr()
	if err != nil {
		return 0, err
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, fmt.Errorf("free loopback port %s: %w", addr, err)
	}
	return strconv.Atoi(port)
}
