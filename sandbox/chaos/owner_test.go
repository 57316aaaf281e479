// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"net"
	"os"
	"testing"
)

// TestSocketOwner_FindsTheProcessOfAConnectionsClientSide: what the proxies' Block filters on is
// the process that opened a connection, found through /proc from its client port.
func TestSocketOwner_FindsTheProcessOfAConnectionsClientSide(t *testing.T) {
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("needs /proc/net/tcp")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	port := c.LocalAddr().(*net.TCPAddr).Port
	if got := socketOwner(port, map[string]int{"other": 1, "me": os.Getpid()}); got != "me" {
		t.Fatalf("owner of port %d: %q, want me", port, got)
	}
	if got := socketOwner(port, map[string]int{"other": 1}); got != "" {
		t.Fatalf("owner of port %d among other processes: %q, want none", port, got)
	}
}
