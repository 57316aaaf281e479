// SPDX-License-Identifier: Apache-2.0

// Package labkit holds what the sandbox's end-to-end test packages share about the lab: its
// report, a second provisioner taking a node's lock, and a region's edge configuration. It
// imports the fleet and the stack, so it stands beside them and not in sandbox/internal, which
// holds only low-level helpers (processes, ports, files, discovery).
package labkit

import (
	"context"
	"testing"
	"time"

	"github.com/choria-io/go-choria/backoff"

	"github.com/seed96588659/muster/pkg/metrics"
	"github.com/seed96588659/muster/pkg/rpc"
	"github.com/seed96588659/muster/sandbox/fleet/audit"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
)

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
