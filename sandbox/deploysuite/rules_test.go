// SPDX-License-Identifier: Apache-2.0

package deploysuite

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed96588659/muster/pkg/gobuild"
)

// promtool returns a promtool binary, installing one into bin/ when none is at hand.
func promtool(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("sh", filepath.Join(root, "deploy", "tools", "promtool.sh"))
	cmd.Env = gobuild.Env()
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("deploy/tools/promtool.sh found no promtool and could not install one: %v\n%s", err, msg)
	}
	return strings.TrimSpace(string(out))
}

// TestAlertRules_PassPromtool: the rules are valid (promtool check rules) and their unit tests
// pass (promtool test rules): each alert fires on trouble and stays silent on a healthy cluster.
func TestAlertRules_PassPromtool(t *testing.T) {
	p := promtool(t)
	dir := filepath.Join(root, "deploy", "prometheus")
	for _, args := range [][]string{{"check", "rules", "muster-rules.yaml"}, {"test", "rules", "muster-rules.test.yaml"}} {
		cmd := exec.Command(p, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	// Every alert the brief asks for is there.
	body := string(readRepo(t, "deploy/prometheus/muster-rules.yaml"))
	for _, a := range []string{"MusterNoLeader", "MusterLeaderFlapping", "MusterLeasesExpiring", "MusterStaleReports", "MusterProvisioningErrors", "MusterAbandonedNodes"} {
		if !strings.Contains(body, "alert: "+a+"\n") {
			t.Errorf("muster-rules.yaml has no alert %s", a)
		}
	}
}
