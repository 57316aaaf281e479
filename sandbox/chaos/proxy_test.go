// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"bufio"
	"io"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"
)

// echoServer answers every line with the same line.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
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

func roundTrip(c net.Conn, msg string) (string, error) {
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, msg+"\n"); err != nil {
		return "", err
	}
	return bufio.NewReader(c).ReadString('\n')
}

func TestProxy_PartitionCutsAndRefusesThenHeals(t *testing.T) {
	p, c := connected(t, nil)
	p.Partition()
	if _, err := roundTrip(c, "two"); err == nil {
		t.Fatal("an open connection survived the partition")
	}
	c2, err := net.Dial("tcp", p.Addr())
	if err == nil {
		if _, err := roundTrip(c2, "three"); err == nil {
			t.Fatal("a new connection got through the partition")
		}
		c2.Close()
	}
	p.Heal()
	c3, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if got, err := roundTrip(c3, "four"); err != nil || got != "four\n" {
		t.Fatalf("after heal: %q %v", got, err)
	}
	if p.Refused() < 2 {
		t.Errorf("refused %d connections, want at least 2", p.Refused())
	}
}

// TestProxy_BlockByOrigin cuts only the connections this process opened, found through /proc.
func TestProxy_BlockByOrigin(t *testing.T) {
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("needs /proc/net/tcp")
	}
	pids := map[string]int{"me": os.Getpid()}
	p, err := NewProxy("test", echoServer(t), func(a *net.TCPAddr) string { return socketOwner(a.Port, pids) })
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.Block(func(origin string) bool { return origin == "someone-else" })
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := roundTrip(c, "kept"); err != nil || got != "kept\n" {
		t.Fatalf("a connection of another origin was cut: %q %v", got, err)
	}
	p.Block(func(origin string) bool { return origin == "me" })
	if _, err := roundTrip(c, "cut"); err == nil {
		t.Fatal("this process's connection survived a block of its origin")
	}
}

// TestProxy_BlockCutsAConnectionWhoseOriginWasUnknownAtAccept: the owner lookup can miss at
// accept (a member just restarted, its new pid not tracked yet); such a connection is looked up
// again when a block comes, and cut when it is the blocked origin's. Kept, the isolated leader's
// pipeline to one follower keeps a quorum, and no new leader is elected.
func TestProxy_BlockCutsAConnectionWhoseOriginWasUnknownAtAccept(t *testing.T) {
	var known atomic.Bool
	p, c := connected(t, func(*net.TCPAddr) string {
		if known.Load() {
			return "leader"
		}
		return ""
	})
	known.Store(true)
	p.Block(func(origin string) bool { return origin == "leader" })
	if _, err := roundTrip(c, "cut"); err == nil {
		t.Fatal("the leader's connection, of unknown origin at accept, survived a block of its origin")
	}
}

// connected starts a proxy to an echo server with origin and returns it with one connection
// through it that has carried a round trip; both are closed with the test.
func connected(t *testing.T, origin func(*net.TCPAddr) string) (*Proxy, net.Conn) {
	t.Helper()
	p, err := NewProxy("test", echoServer(t), origin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if got, err := roundTrip(c, "up"); err != nil || got != "up\n" {
		t.Fatalf("through the proxy: %q %v", got, err)
	}
	return p, c
}
