// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/config"
	"github.com/seed96588659/muster/pkg/testkit"
)

// TestJoinCluster_AMemberStopsTryingWhenItsTargetIsDown: a member its own Raft configuration
// holds (restarted with join kept) does not ask its join target, so a target that is down costs
// it no warning every 5 s for ever.
func TestJoinCluster_AMemberStopsTryingWhenItsTargetIsDown(t *testing.T) {
	logger, logs := testkit.NewLogger()
	svc, err := coordinator.New(coordinator.Config{ID: "c1", DataDir: filepath.Join(t.TempDir(), "c1"), RaftBind: "127.0.0.1:0",
		APIAddress: "http://c1.invalid", Bootstrap: true, LedgerNoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	testkit.WaitFor(t, 30*time.Second, "c1 to lead", svc.IsLeader)
	cfg := config.Config{NodeID: "c1", Join: []string{"http://127.0.0.1:1"}}
	cfg.Auth.AdminToken = e2eAdminToken
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- joinCluster(ctx, svc, cfg, &http.Client{}, logger) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("join loop of a member: %v", err)
		}
	case <-ctx.Done():
		t.Fatalf("a member of the cluster keeps joining through a target that is down:\n%s", logs.String())
	}
	if logs.Contains("join failed") || !logs.Contains("not joining") {
		t.Fatalf("log of the join loop:\n%s", logs.String())
	}
}
