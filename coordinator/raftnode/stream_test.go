// SPDX-License-Identifier: Apache-2.0

package raftnode

import (
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/seed96588659/muster/pkg/testkit"
)

// TestStream_DialRefusesAServerWhoseCertificateIsNotAMembers: a member dialling an address that
// answers with a certificate of the CA without the member name (an edge's, behind a hijacked
// address) does not replicate to it, and says why.
func TestStream_DialRefusesAServerWhoseCertificateIsNotAMembers(t *testing.T) {
	ca := testkit.NewCA(t, "muster test ca")
	impostor, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{ca.IssueClient(t, "edge-eu-1")}, ClientCAs: ca.Pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS13})
	if err != nil {
		t.Fatal(err)
	}
	defer impostor.Close()
	go func() {
		for {
			c, err := impostor.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(io.Discard, c); c.Close() }()
		}
	}()
	logs := &testkit.LogBuffer{}
	s, err := newStreamLayer("127.0.0.1:0", "", nil, ca.MutualTLS(t, "c1"), DefaultMemberName, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	conn, err := s.Dial(raft.ServerAddress(impostor.Addr().String()), 5*time.Second)
	if err == nil {
		conn.Close()
		t.Fatal("a member dialled a peer whose certificate is not a member's")
	}
	if !strings.Contains(err.Error(), "edge-eu-1") || !strings.Contains(logs.String(), "edge-eu-1") {
		t.Fatalf("dial error %q and log %q do not name the certificate", err, logs.String())
	}
}

// TestStream_SilentConnectionIsClosed: a connection that never completes a handshake (or, without
// TLS, never sends a request) is closed at the handshake deadline; one that spoke is then held to
// the idle deadline.
func TestStream_SilentConnectionIsClosed(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := deadlineListener{Listener: raw, handshake: 200 * time.Millisecond, idle: 3 * time.Second}
	defer ln.Close()
	accepted := make(chan error, 2)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				_, err := io.Copy(io.Discard, c)
				if err == nil {
					err = io.EOF
				}
				accepted <- err
				c.Close()
			}()
		}
	}()
	silent, err := net.Dial("tcp", raw.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	if err := <-accepted; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("silent connection ended with %v, want the handshake deadline", err)
	}
	talker, err := net.Dial("tcp", raw.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer talker.Close()
	// Speaking every 100 ms keeps it open past the handshake deadline (the idle one is far longer
	// than a loaded machine's stall); silence then ends it.
	for range 5 {
		if _, err := talker.Write([]byte{1}); err != nil {
			t.Fatalf("connection that spoke was closed: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	select {
	case err := <-accepted:
		t.Fatalf("a connection speaking every 100 ms was closed: %v", err)
	default:
	}
	if err := <-accepted; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("idle connection ended with %v, want the idle deadline", err)
	}
}
