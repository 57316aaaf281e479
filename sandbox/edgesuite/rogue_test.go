// SPDX-License-Identifier: Apache-2.0

package edgesuite

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/pkg/rpc"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/audit"
	"github.com/seed96588659/muster/sandbox/fleet/emulated"
	"github.com/seed96588659/muster/sandbox/fleet/faults"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
)

// TestEdge_RogueWinningTheCSRRaceGetsNothingSigned: a client holding the provisioning.jwt that
// every server image carries subscribes to a node's request subject and answers gencsr at once
// with its own key, while the real node answers after its key generation (200 ms, within a real
// go-choria server's 16-240 ms). The edge signs neither: the node's result is
// duplicate_responder naming gencsr and no configure is sent to it. A node nobody shadows is
// provisioned, its configure no sooner than duplicate_window after its CSR.
func TestEdge_RogueWinningTheCSRRaceGetsNothingSigned(t *testing.T) {
	t.Parallel()
	victim, bystander := emu(0), emu(1)
	l := startLab(t, lab.Options{
		Emulated: 2,
		Faults:   faults.NewSet(rule(victim, faults.Fault{Delay: 200 * time.Millisecond, DelayActions: []string{"choria_provision#gencsr"}})),
	})
	startRogue(t, l, l.Info().Regions[region].EmulatedPrefix, 1, "choria_provision#gencsr")
	// The window is wide here: on a loaded machine the real node's 200 ms reply can come half a
	// second after the rogue's, which the default window would rightly not catch.
	const window = 3 * time.Second
	re := startEdge(t, l, func(c *config.Config) { c.Features.PKI = true; c.DuplicateWindow = window }, nil)

	testkit.WaitFor(t, 2*time.Minute, "a result for the shadowed node and the other provisioned", func() bool {
		return len(re.ResultsOf(victim)) > 0 && re.Has(bystander, hostflow.Provisioned)
	})
	expectError(t, re, victim, hostflow.DuplicateResponder, rpc.ErrDuplicateResponder, "answered gencsr for "+victim)
	if res := re.ResultsOf(victim)[0]; res.Step != "gencsr" {
		t.Fatalf("shadowed node's step %q, want gencsr", res.Step)
	}
	if !slices.ContainsFunc(strings.Split(re.Logs.String(), "\n"), func(line string) bool {
		return strings.Contains(line, "node="+victim) && strings.Contains(line, "outcome=duplicate_responder")
	}) {
		t.Fatal("no log line names the shadowed node and duplicate_responder")
	}
	rep := readActions(t, l)
	var csrAt, configureAt time.Time
	for _, a := range rep {
		switch {
		case a.Node == victim && a.Action == audit.Configure:
			t.Fatalf("configure reached the shadowed node at %s", a.Time.Format(time.StampMicro))
		case a.Node == bystander && a.Action == "choria_provision#gencsr" && a.OK:
			csrAt = a.Time
		case a.Node == bystander && a.Action == audit.Configure && configureAt.IsZero():
			configureAt = a.Time
		}
	}
	if gap := configureAt.Sub(csrAt); csrAt.IsZero() || gap < window {
		t.Fatalf("the unshadowed node got configure %s after its CSR, want at least %s", gap, window)
	}
}

// startRogue connects count emulated nodes named prefix and a number (the lab's own prefix: its
// first count nodes) to the region's provisioning broker with the region's provisioning.jwt,
// answering only the actions named, at once. Their actions are not recorded: the lab's log
// holds the real nodes' alone.
func startRogue(t *testing.T, l *lab.Lab, prefix string, count int, answers ...string) {
	t.Helper()
	info := l.Info().Regions[region]
	jwt, err := os.ReadFile(info.ProvisioningJWT)
	if err != nil {
		t.Fatal(err)
	}
	f, err := emulated.Start(context.Background(), emulated.Config{
		BrokerURL: info.BrokerURL,
		Region:    region,
		Prefix:    prefix,
		Count:     count,
		JWT:       strings.TrimSpace(string(jwt)),
		Faults:    faults.NewSet(faults.Rule{Select: faults.Selector{Glob: prefix + "*"}, Fault: faults.Fault{Only: answers}}),
	})
	if err != nil {
		t.Fatalf("start the rogue: %v", err)
	}
	t.Cleanup(func() { _ = f.Stop() })
}
