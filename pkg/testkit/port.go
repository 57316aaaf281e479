// SPDX-License-Identifier: Apache-2.0

package testkit

import (
	"net"
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
