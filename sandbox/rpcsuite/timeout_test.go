// SPDX-License-Identifier: Apache-2.0

package rpcsuite

import (
	"context"
	"testing"

	"github.com/seed96588659/muster/pkg/rpc"
)

// TestConn_DefaultTimeoutOutlastsASlowReleaseUpdate: with no timeout configured, a Conn waits
// for release_update as long as the agent may take to unpack, so one attempt is enough and no
// retry queues behind the agent's lock.
func TestConn_DefaultTimeoutOutlastsASlowReleaseUpdate(t *testing.T) {
	t.Parallel()
	c := newCaller(t, "edge-eu-slow.mcollective", slowUpdateDelay)
	conn := c.dial(t, rpc.ConnOptions{})

	n := c.node(conn, nodeSlowUpdate, nil)
	if _, err := n.ReleaseUpdate(context.Background(), shared.UpdatesURL(), shared.UpgradeVersion()); err != nil {
		t.Fatalf("release_update: %v", err)
	}
	if got := c.metrics.RPCAttempts("eu", "choria_provision#release_update"); got != 1 {
		t.Fatalf("release_update took %d attempts, want 1", got)
	}
}
