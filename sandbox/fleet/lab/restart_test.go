// SPDX-License-Identifier: Apache-2.0

package lab_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/choria-io/go-choria/client/rpcutilclient"

	"github.com/seed96588659/muster/sandbox/fleet/lab"
)

// TestLab_RestartBrokerKeepsPortAndNodesReconnect restarts a region's broker; its emulated
// nodes reconnect on their own and answer on the same URL, and the lab's credentials still work.
func TestLab_RestartBrokerKeepsPortAndNodesReconnect(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l, err := lab.Start(ctx, lab.Options{Dir: filepath.Join(t.TempDir(), "lab"), Regions: []string{"rb"}, Emulated: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Stop()
	r := l.Region("rb")
	url, token := r.Broker().URL(), r.Broker().Token()
	node := r.EmulatedNodes()[1]
	if err := r.RestartBroker(ctx, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if r.Broker().URL() != url || r.Broker().Token() != token {
		t.Fatalf("restarted broker at %s (token changed %v), want %s", r.Broker().URL(), r.Broker().Token() != token, url)
	}
	fw, err := r.Framework("restart-test.mcollective")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rpcutilclient.New(fw)
	if err != nil {
		t.Fatal(err)
	}
	// The node reconnects within its reconnect wait; until then the inventory gets no reply.
	deadline := time.Now().Add(90 * time.Second)
	for {
		cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
		res, err := rc.OptionTargets([]string{node}).OptionWorkers(1).Inventory().Do(cctx)
		ccancel()
		if err == nil && len(res.AllOutputs()) == 1 && res.AllOutputs()[0].ResultDetails().OK() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer after the broker restart: %v", node, err)
		}
	}
}
