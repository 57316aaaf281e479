// SPDX-License-Identifier: Apache-2.0

package edgesuite

import (
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
)

// inventedPrefix starts the identities the rogue invents; they sort before the real node's, so
// an edge that takes a sweep in identity order meets every one of them first.
const inventedPrefix = "fake-eu-"

// TestEdge_InventedIdentitiesDoNotStarveARealNode: a client holding the provisioning.jwt answers
// every discovery sweep with 200 invented identities and nothing else. A real go-choria node in
// provisioning mode is still provisioned while the rogue keeps answering, and no invented
// identity gets a host flow: each costs one short check it does not answer, and is never
// registered.
func TestEdge_InventedIdentitiesDoNotStarveARealNode(t *testing.T) {
	t.Parallel()
	l := startLab(t, lab.Options{Real: 1})
	// One connection answering every discovery for 200 invented identities, and nothing else.
	startRogue(t, l, inventedPrefix, 200, "discovery#ping")
	re := startEdge(t, l, func(c *config.Config) {
		c.Features.PKI = true
		c.Workers = 16
		c.NewNodeCheckTimeout = config.DefaultNewNodeCheckTimeout
	}, nil)

	id := lab.RealIdentity(region, 1)
	testkit.WaitFor(t, 90*time.Second, "the real node provisioned while a rogue invents 200 identities", func() bool {
		return re.Has(id, hostflow.Provisioned)
	})
	realRestarted(t, l, id)
	flowed := 0
	for node := range re.Touched() {
		if strings.HasPrefix(node, inventedPrefix) {
			flowed++
		}
	}
	if flowed > 0 {
		t.Fatalf("%d of 200 invented identities got a host flow", flowed)
	}
	// Logged with the sweep after their checks ended: a round hands on its answers without
	// waiting for the silent ones (edge.Options.CheckRound).
	testkit.WaitFor(t, 30*time.Second, "a log line saying invented identities failed their check", func() bool {
		return strings.Contains(re.Logs.String(), "new nodes did not answer their check")
	})
}
