// SPDX-License-Identifier: Apache-2.0

package edgesuite

import (
	"context"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge/discovery"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
)

// TestDiscovery_FindsTenThousandNodes: one broadcast sweep finds every one of a region's 10,000
// emulated nodes, each once, on a 2-core machine.
func TestDiscovery_FindsTenThousandNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000-node lab")
	}
	const n = 10000
	l := startLab(t, lab.Options{Emulated: n})
	fw, err := l.Region(region).Framework("edge-eu-2.mcollective")
	if err != nil {
		t.Fatal(err)
	}
	d, err := discovery.New(context.Background(), fw, discovery.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	found, err := d.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, id := range found {
		if seen[id] {
			t.Fatalf("%s found twice", id)
		}
		seen[id] = true
	}
	for _, id := range l.Region(region).EmulatedNodes() {
		if !seen[id] {
			t.Fatalf("found %d of %d nodes; %s missing", len(found), n, id)
		}
	}
	// A targeted sweep asks only the named nodes.
	some, err := d.Sweep(ctx, emu(5), emu(9999), "no-such-node")
	if err != nil {
		t.Fatal(err)
	}
	if len(some) != 2 {
		t.Fatalf("targeted sweep found %v", some)
	}
}
