// SPDX-License-Identifier: Apache-2.0

package rpcsuite

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/rpc"
	"github.com/seed96588659/muster/pkg/testkit"
)

func TestActions_EveryActionSucceedsAgainstRealNode(t *testing.T) {
	c := newCaller(t, "edge-eu-1.mcollective", 10*time.Second)
	r := shared.Region(region)
	for name, tc := range map[string]struct {
		transport rpc.Transport
		identity  string
	}{
		"conn":    {c.conn, realFlowConn},
		"percall": {c.percall, realFlowCall},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := r.ProvisionedConfig(tc.identity)
			if err != nil {
				t.Fatal(err)
			}
			body, err := json.Marshal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			runFullFlow(t, c.node(tc.transport, tc.identity, nil), "0.29.4", string(body))

			// The restart is real: the process re-executes into its new configuration and leaves
			// provisioning mode.
			testkit.WaitFor(t, 90*time.Second, tc.identity+" to restart out of provisioning", func() bool {
				st, err := r.NodeStatus(tc.identity)
				return err == nil && st.Starts >= 2 && st.Connected && !st.Provisioning
			})
		})
	}
}

func TestActions_ReleaseUpdateUpgradesRealNode(t *testing.T) {
	// A real release_update downloads and bunzips the node binary before it replies, for up to
	// go-choria's 20 s agent timeout on a loaded machine; a retry after a shorter attempt
	// timeout would wait behind the first on the agent's mutex.
	c := newCaller(t, "edge-eu-1.mcollective", 25*time.Second)
	assertUpgrade(t, c, realUpgrade)
}

func TestActions_ReleaseUpdateUpgradesEmulatedNode(t *testing.T) {
	c := newCaller(t, "edge-eu-1.mcollective", 10*time.Second)
	assertUpgrade(t, c, nodeUpgrade)
}

// assertUpgrade sends release_update and waits for the node to come back in provisioning mode
// reporting the new version.
func assertUpgrade(t *testing.T, c *caller, identity string) {
	t.Helper()
	ctx := context.Background()
	n := c.node(c.conn, identity, nil)
	if _, err := n.ReleaseUpdate(ctx, shared.UpdatesURL(), shared.UpgradeVersion()); err != nil {
		t.Fatalf("release_update: %v", err)
	}

	probe := newCaller(t, "edge-eu-2.mcollective", time.Second)
	testkit.WaitFor(t, 120*time.Second, "the node to run the upgraded version", func() bool {
		inv, err := probe.node(probe.conn, identity, nil).Inventory(ctx)
		return err == nil && inv.Version == shared.UpgradeVersion()
	})
}
