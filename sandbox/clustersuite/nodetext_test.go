// SPDX-License-Identifier: Apache-2.0

package clustersuite

import (
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/sandbox/fleet/faults"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
)

// TestCluster_NodeTextReachesTheLedgerEscaped: a node on the provisioning broker chooses its
// inventory version and the status message of its failed replies. The edge escapes their
// control characters before it reports, so its own results, and the ledger's, hold them readable
// (ESC as \x1b) and nothing an operator's terminal would act on; the node is provisioned as usual.
func TestCluster_NodeTextReachesTheLedgerEscaped(t *testing.T) {
	const region = "tx"
	const (
		version = "1.0\x1b]52;c;b3duZWQ=\x07"       // OSC 52: writes the operator's clipboard
		message = "disk full\x1b[2J\rcleared\u009b" // clears the screen, repaints the line, a C1 CSI
	)
	odd := emu(region, 1)
	l := startLab(t, lab.Options{Regions: []string{region}, Emulated: 2, Faults: faults.NewSet(
		rule(odd, faults.Fault{Version: version, Fails: []faults.Fail{{Action: "choria_provision#configure", Times: 5, Message: message}}}),
	)})
	e := startEdge(t, l, edgeSpec{region: region, n: 1})
	ctx := ctxT(t, 2*time.Minute)
	waitNodesIn(t, ctx, region, 2, api.StateProvisioned, time.Minute, "both nodes provisioned, the odd one after a failed attempt")

	n := mustNode(t, ctx, odd)
	if want := `1.0\x1b]52;c;b3duZWQ=\a`; n.InventoryVersion != want {
		t.Errorf("inventory version in the ledger %q, want %q", n.InventoryVersion, want)
	}
	if want := `disk full\x1b[2J\rcleared\u009b`; !hasTransition(n, api.StateWaiting, want) {
		t.Errorf("no failed attempt with %q in the ledger:\n%s", want, history(n))
	}
	texts := []string{n.InventoryVersion, n.LastError}
	for _, tr := range n.History {
		texts = append(texts, tr.Error, tr.Reason)
	}
	results := e.ResultsOf(odd)
	if len(results) < 2 {
		t.Fatalf("the edge recorded %d results for %s, want a failure and the provisioning", len(results), odd)
	}
	for _, r := range results {
		texts = append(texts, r.Version)
		if r.Err != nil {
			texts = append(texts, r.Err.Error())
		}
	}
	for _, s := range texts {
		if i := strings.IndexFunc(s, unicode.IsControl); i >= 0 {
			t.Errorf("node text carries a control character at byte %d: %q", i, s)
		}
	}
}
