// SPDX-License-Identifier: Apache-2.0

package edgesuite

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/seed96588659/muster/edge/app"
	"github.com/seed96588659/muster/edge/plan"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/labkit"
	"github.com/seed96588659/muster/sandbox/stack/edgefile"
)

// identities are the plan's nodes in its order.
func identities(r *plan.Report) []string {
	out := make([]string, 0, len(r.Nodes))
	for _, n := range r.Nodes {
		out = append(out, n.Identity)
	}
	return out
}

// TestPlan_ActsOnNothingAndSaysWhatARunWouldDo: on a lab of a real and emulated nodes, a plan
// without the helper lists every node in identity order with what only the helper can decide
// left to it; with the helper (deferring one, shutting one down, answering the lab's upgrade
// version with features.upgrades on) it names each node's defer, shutdown or upgrade from the
// base to the target version, with the helper's configuration keys and no value. Through both
// plans no node received anything but discovery and rpcutil#inventory, and every node still
// answers in provisioning mode.
func TestPlan_ActsOnNothingAndSaysWhatARunWouldDo(t *testing.T) {
	t.Parallel()
	l := startLab(t, lab.Options{Real: 1, Emulated: 5, RecordDiscovery: true})
	emulated := l.Region(region).EmulatedNodes()
	slices.Sort(emulated)
	deferred, shut := emulated[1], emulated[2]
	cfg := labkit.EdgeConfig(t, l, region, bins.helper)
	cfg.Features.Upgrades = true
	cfg.Helper += " --defer '^" + deferred + "$' --shutdown '^" + shut + "$'"

	want := l.Region(region).Nodes()
	slices.Sort(want)
	r := labkit.Plan(t, cfg, app.PlanOptions{})
	if got := identities(r); !slices.Equal(got, want) {
		t.Fatalf("plan lists %v, want %v in this order", got, want)
	}
	for _, n := range r.Nodes {
		if n.Action != plan.Provision || n.Helper != nil || !strings.Contains(n.Reason, "plan --helper asks it") {
			t.Errorf("without the helper %s: %s %q (helper %+v)", n.Identity, n.Action, n.Reason, n.Helper)
		}
	}
	if r.Summary.Provision != len(want) || r.HelperAsked || r.Mode != plan.ModeStandalone {
		t.Errorf("summary %+v, helper asked %v, mode %s", r.Summary, r.HelperAsked, r.Mode)
	}

	r = labkit.Plan(t, cfg, app.PlanOptions{AskHelper: true})
	for _, n := range r.Nodes {
		switch {
		case n.Identity == deferred:
			if n.Action != plan.Defer || !strings.Contains(n.Reason, "matches --defer") {
				t.Errorf("%s: %s %q, want defer", n.Identity, n.Action, n.Reason)
			}
		case n.Identity == shut:
			if n.Action != plan.Shutdown || !strings.Contains(n.Reason, "matches --shutdown") {
				t.Errorf("%s: %s %q, want shutdown", n.Identity, n.Action, n.Reason)
			}
		case strings.HasPrefix(n.Identity, lab.EmulatedPrefix(region)):
			if n.Action != plan.Upgrade || n.From != l.BaseVersion() || n.To != l.UpgradeVersion() {
				t.Errorf("%s: %s from %q to %q (%s), want upgrade from %s to %s", n.Identity, n.Action, n.From, n.To, n.Reason, l.BaseVersion(), l.UpgradeVersion())
			}
			if n.Helper == nil || !slices.Contains(n.Helper.ConfigurationKeys, "plugin.choria.middleware_hosts") {
				t.Errorf("%s: helper answer %+v, want its configuration's keys", n.Identity, n.Helper)
			}
		}
	}
	if s := r.Summary; s.Defer != 1 || s.Shutdown != 1 || s.Upgrade < len(emulated)-2 || s.Nodes != len(want) {
		t.Errorf("summary with the helper: %+v", s)
	}

	actions := readActions(t, l)
	if bad := labkit.NotReads(actions); len(bad) > 0 {
		t.Fatalf("a plan acted on nodes: %+v", bad)
	}
	inventories := labkit.Counted(actions, "rpcutil#inventory")
	for _, id := range want {
		if inventories[id] != 2 {
			t.Errorf("%s received rpcutil#inventory %d times, want once per plan", id, inventories[id])
		}
	}
	if r := labkit.Plan(t, cfg, app.PlanOptions{}); !slices.Equal(identities(r), want) {
		t.Fatalf("after two plans discovery finds %v, want every node still in provisioning mode: %v", identities(r), want)
	}
}

// TestPlan_BinaryPrintsTextAndJSON: `muster-edge plan --config FILE` with the file the sandbox
// writes prints the heading, a row per node, the summary and the guarantee; --json the same plan
// as JSON.
func TestPlan_BinaryPrintsTextAndJSON(t *testing.T) {
	t.Parallel()
	l := startLab(t, lab.Options{Emulated: 3, RecordDiscovery: true})
	file, err := edgefile.Write(l, region, bins.helper)
	if err != nil {
		t.Fatal(err)
	}
	nodes := l.Region(region).Nodes()
	slices.Sort(nodes)

	out, err := exec.Command(bins.edge, "plan", "--config", file, "--helper").Output()
	if err != nil {
		t.Fatalf("muster-edge plan: %v\n%s", err, stderrOf(err))
	}
	text := string(out)
	t.Logf("muster-edge plan --helper:\n%s", text)
	for _, want := range []string{"plan for site " + region, "NODE", "summary: 3 nodes: 3 provision, 0 upgrade", plan.Guarantee} {
		if !strings.Contains(text, want) {
			t.Errorf("plan text lacks %q:\n%s", want, text)
		}
	}
	last := -1
	for _, id := range nodes {
		i := strings.Index(text, id)
		if i <= last {
			t.Errorf("%s is not listed after the nodes before it:\n%s", id, text)
		}
		last = i
	}

	out, err = exec.Command(bins.edge, "plan", "--config", file, "--json").Output()
	if err != nil {
		t.Fatalf("muster-edge plan --json: %v\n%s", err, stderrOf(err))
	}
	var r plan.Report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("plan --json: %v\n%s", err, out)
	}
	if !slices.Equal(identities(&r), nodes) || r.Summary.Provision != 3 || r.HelperAsked {
		t.Fatalf("plan --json: %s", out)
	}
	if bad := labkit.NotReads(readActions(t, l)); len(bad) > 0 {
		t.Fatalf("a plan acted on nodes: %+v", bad)
	}
}

// stderrOf is what a command that failed wrote to standard error.
func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
