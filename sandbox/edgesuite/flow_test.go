// SPDX-License-Identifier: Apache-2.0

package edgesuite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/audit"
	"github.com/seed96588659/muster/sandbox/fleet/faults"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/labkit"
	"github.com/seed96588659/muster/sandbox/stack/edgefile"
)

// TestEdge_HelperOutcomes: defer is retried on a later cycle, shutdown shuts the node down and
// counts it done, a failing helper fails the node naming the helper, and an emulated node
// upgraded by release_update comes back and is provisioned on the new version.
func TestEdge_HelperOutcomes(t *testing.T) {
	t.Parallel()
	old := "0.29.4"
	l := startLab(t, lab.Options{
		Emulated:    8,
		BaseVersion: lab.DefaultUpgradeVersion,
		Faults:      faults.NewSet(rule(emu(4), faults.Fault{Version: old})),
	})
	re := startEdge(t, l, func(c *config.Config) {
		c.Features.Upgrades = true
		c.Helper += " --defer '^" + emu(1) + "$' --shutdown '^" + emu(2) + "$' --fail '^" + emu(3) + "$'"
	}, nil)

	testkit.WaitFor(t, 2*time.Minute, "every helper outcome", func() bool {
		return re.Has(emu(0), hostflow.Provisioned) && len(re.ResultsOf(emu(1))) >= 2 &&
			re.Has(emu(2), hostflow.Shutdown) && re.Has(emu(3), hostflow.Failed) &&
			re.Has(emu(4), hostflow.UpgradeSent) && re.Has(emu(4), hostflow.Provisioned)
	})
	for _, r := range re.ResultsOf(emu(1)) {
		if r.Outcome != hostflow.Deferred || !strings.Contains(r.Err.Error(), "configuration deferred") {
			t.Fatalf("deferred node: %s %v", r.Outcome, r.Err)
		}
	}
	expectError(t, re, emu(3), hostflow.Failed, nil, "could not invoke configure helper")
	expectError(t, re, emu(3), hostflow.Failed, nil, edgefile.SampleHelper)

	rep := labkit.LabReport(t, l)
	assertNoDoubleProvisioning(t, rep)
	if got := acceptedCount(rep, emu(2), audit.Shutdown); got != 1 {
		t.Fatalf("shutdown accepted %d times", got)
	}
	if got := acceptedCount(rep, emu(2), audit.Configure); got != 0 {
		t.Fatalf("the shut down node was configured %d times", got)
	}
	if got := acceptedCount(rep, emu(4), audit.ReleaseUpdate); got != 1 {
		t.Fatalf("release_update accepted %d times", got)
	}
	if st, _ := l.Region(region).Fleet().State(emu(4)); st.Version != lab.DefaultUpgradeVersion {
		t.Fatalf("upgraded node runs %s", st.Version)
	}
	// The deferred node was never configured; a shutdown and an upgrade are not "provisioned".
	if got := acceptedCount(rep, emu(1), audit.Configure); got != 0 {
		t.Fatalf("deferred node configured %d times", got)
	}
}

// TestEdge_UnansweredRestartIsConfirmedByRediscovery: a node accepts restart but its reply comes
// after the edge stopped waiting; later tries go unanswered (the agent holds its mutex until it
// restarts). The edge does not count that as a failure: once the node has left provisioning
// mode, rediscovery confirms it provisioned.
func TestEdge_UnansweredRestartIsConfirmedByRediscovery(t *testing.T) {
	t.Parallel()
	l := startLab(t, lab.Options{
		Emulated: 3,
		Faults: faults.NewSet(rule(emu(1), faults.Fault{
			Delay: 5 * time.Second, DelayActions: []string{"choria_provision#restart"},
		})),
	})
	re := startEdge(t, l, nil, nil)
	testkit.WaitFor(t, 2*time.Minute, "all three provisioned", func() bool {
		return re.Has(emu(0), hostflow.Provisioned) && re.Has(emu(1), hostflow.Provisioned) && re.Has(emu(2), hostflow.Provisioned)
	})
	if got := len(re.ResultsOf(emu(1))); got != 1 {
		t.Fatalf("the slow restarter has %d results: %+v", got, re.ResultsOf(emu(1)))
	}
	if !re.Logs.Contains(`msg="host flow ended"`) && !re.Logs.Contains("provisioned") {
		t.Fatal("no log of the confirmation")
	}
	rep := labkit.LabReport(t, l)
	assertNoDoubleProvisioning(t, rep)
	if got := acceptedCount(rep, emu(1), audit.Restart); got != 1 {
		t.Fatalf("restart accepted %d times", got)
	}
}

// TestEdge_PauseMidBatch: once the operator pauses, no new attempt starts; resume provisions the rest.
func TestEdge_PauseMidBatch(t *testing.T) {
	t.Parallel()
	const n = 120
	l := startLab(t, lab.Options{
		Emulated: n,
		// Slow every inventory so the batch is still in flight when the pause lands.
		Faults: faults.NewSet(faults.Rule{Select: faults.Selector{Glob: lab.EmulatedPrefix(region) + "*"},
			Fault: faults.Fault{Delay: 300 * time.Millisecond, DelayActions: []string{"rpcutil#inventory"}}}),
	})
	re := startEdge(t, l, nil, func(o *edge.Options) { o.Workers = 16 })
	testkit.WaitFor(t, time.Minute, "the first nodes provisioned", func() bool {
		return re.App.Edge.Stats().Outcomes[hostflow.Provisioned] >= 10
	})
	re.App.Edge.Pause()
	pausedAt := time.Now()
	testkit.WaitFor(t, time.Minute, "every flow in flight stopped", func() bool { return re.App.Edge.Stats().InFlight == 0 })
	stopped := time.Now()

	// No attempt started after the pause was seen: every action the edge sent after that instant
	// belongs to a flow that was already running, so none of them is a node's first action.
	actions := readActions(t, l)
	firstAction := map[string]time.Time{}
	for _, a := range actions {
		if _, ok := firstAction[a.Node]; !ok {
			firstAction[a.Node] = a.Time
		}
	}
	for node, at := range firstAction {
		if at.After(pausedAt.Add(100 * time.Millisecond)) {
			t.Errorf("%s was first touched at %s, after the pause at %s", node, at.Format(time.StampMicro), pausedAt.Format(time.StampMicro))
		}
	}
	provisionedWhilePaused := re.App.Edge.Stats().Outcomes[hostflow.Provisioned]
	if provisionedWhilePaused >= n {
		t.Fatalf("pause came too late to test anything: %d of %d provisioned", provisionedWhilePaused, n)
	}
	if re.App.Edge.Stats().Outcomes[hostflow.Paused] == 0 {
		t.Fatal("no flow was stopped by the pause")
	}
	_ = stopped

	re.App.Edge.Resume()
	testkit.WaitFor(t, 2*time.Minute, "every node provisioned after resume", func() bool {
		for i := range n {
			if !re.Has(emu(i), hostflow.Provisioned) {
				return false
			}
		}
		return true
	})
	rep := labkit.LabReport(t, l)
	assertNoDoubleProvisioning(t, rep)
	for i := range n {
		if got := acceptedCount(rep, emu(i), audit.Restart); got != 1 {
			t.Errorf("%s accepted %d restarts", emu(i), got)
		}
	}
}

// TestEdge_LogsHoldNoSecrets: with debug logging and every credential in play, no log line
// carries the provisioning token, the broker password, a JWT or a private key.
func TestEdge_LogsHoldNoSecrets(t *testing.T) {
	t.Parallel()
	l := startLab(t, lab.Options{Emulated: 5})
	dir := t.TempDir()
	seed, _ := signingKey(t, dir)
	re := startEdge(t, l, func(c *config.Config) {
		c.Features.ED25519 = true
		c.JWTSigningKey = seed
	}, nil)
	testkit.WaitFor(t, time.Minute, "all provisioned", func() bool {
		return re.App.Edge.Stats().Outcomes[hostflow.Provisioned] >= 5
	})
	re.Shutdown(t)
	logs := re.Logs.String()
	info := l.Info().Regions[region]
	seedText, err := os.ReadFile(seed)
	if err != nil {
		t.Fatal(err)
	}
	jwt, err := os.ReadFile(filepath.Clean(info.ProvisioningJWT))
	if err != nil {
		t.Fatal(err)
	}
	for what, secret := range map[string]string{
		"provisioning token": info.ProvisioningToken,
		"broker password":    info.ProvisioningPassword,
		"signing key seed":   strings.TrimSpace(string(seedText)),
		"provisioning JWT":   strings.TrimSpace(string(jwt)),
		"a JWT":              "eyJ",
		"a private key":      "PRIVATE KEY",
	} {
		if secret != "" && strings.Contains(logs, secret) {
			t.Errorf("the edge's log contains %s", what)
		}
	}
	if !strings.Contains(logs, "provisioned") {
		t.Fatal("the log is empty: nothing was checked")
	}
}
