// SPDX-License-Identifier: Apache-2.0

package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestLoad_ApprovalKeys: off by default; flags, the environment and the file set them as every
// key; a bad value is refused naming its key.
func TestLoad_ApprovalKeys(t *testing.T) {
	base := []string{"--node-id", "c1", "--data-dir", "/tmp/d", "--auth-edge-tokens", edgeTok}
	c, err := load(t, base...)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Approval.Manual) != 0 || c.Approval.ReprovisionHold || c.Approval.FlapCount != 0 {
		t.Fatalf("default approval: %+v", c.Approval)
	}
	t.Setenv("MUSTER_APPROVAL_FLAPPING", "3/1h")
	c, err = load(t, append(base, "--approval-manual", "eu,us", "--config", writeFile(t, "approval:\n  reprovision: hold\n"))...)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Approval.Manual, []string{"eu", "us"}) || !c.Approval.ReprovisionHold || c.Approval.FlapCount != 3 || c.Approval.FlapWindow != time.Hour {
		t.Fatalf("approval: %+v", c.Approval)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--approval-reprovision", "sometimes"}, `approval.reprovision: "sometimes" is not auto or hold`},
		{[]string{"--approval-flapping", "3"}, `approval.flapping: "3" is not N/DURATION`},
		{[]string{"--approval-flapping", "1/1h"}, `approval.flapping: "1/1h" is not N/DURATION with N at least 2`},
		{[]string{"--approval-flapping", "3/soon"}, `approval.flapping: "3/soon": the window "soon" is not a positive duration`},
		{[]string{"--approval-flapping", "8/1h"}, "approval.flapping: counting 8 re-entries needs ledger.history_length of at least 22"},
		{[]string{"--approval-manual", "eu,*"}, `approval.manual: "*" holds every region; list it alone`},
	} {
		t.Setenv("MUSTER_APPROVAL_FLAPPING", "")
		if _, err := load(t, append(base, bad.args...)...); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v: %v, want %q", bad.args, err, bad.want)
		}
	}
}
