// SPDX-License-Identifier: Apache-2.0

// Package testkit holds what the sandbox's end-to-end test packages share: a log sink safe for
// many goroutines, the lab's report, a second provisioner taking a node's lock, and a lab
// region's edge configuration.
package testkit

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/choria-io/go-choria/backoff"

	"github.com/seed96588659/muster/pkg/metrics"
	"github.com/seed96588659/muster/pkg/rpc"
	"github.com/seed96588659/muster/sandbox/fleet/audit"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
)

// LogBuffer is a log sink safe for concurrent writers.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *LogBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is everything written so far.
func (s *LogBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Tail is the last n bytes written.
func (s *LogBuffer) Tail(n int) string {
	out := s.String()
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// Contains reports whether sub was written.
func (s *LogBuffer) Contains(sub string) bool { return strings.Contains(s.String(), sub) }

// LabReport builds the sandbox report from the lab's action log.
func LabReport(t testing.TB, l *lab.Lab) audit.Report {
	t.Helper()
	r, err := audit.FromFile(l.ActionsFile())
	if err != nil {
		t.Fatalf("read lab report: %v", err)
	}
	return r
}

// LockNode has caller (a lab client no edge runs as) take identity's provisioning lock by
// fetching its JWT, as a second provisioner would.
func LockNode(t testing.TB, l *lab.Lab, region, caller, identity string) {
	t.Helper()
	fw, err := l.Region(region).Framework(caller)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := rpc.Dial(context.Background(), fw, rpc.ConnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	w, err := rpc.NewWrapper(rpc.WrapperOptions{Site: region, Metrics: metrics.New(), Policy: backoff.Policy{Millis: []int{50}}})
	if err != nil {
		t.Fatal(err)
	}
	n := rpc.NewNode(w, conn, identity, l.Region(region).Broker().Token(), rpc.PauseFunc(func() bool { return false }))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := n.JWT(ctx); err != nil {
		t.Fatalf("the other provisioner could not take %s's lock: %v", identity, err)
	}
}
