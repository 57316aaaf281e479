// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"errors"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// TestE2E_StatusSeesADeadMemberAndALostQuorum kills members of three one at a time: status shows
// a killed member unreachable with how long ago it was last heard from (the cluster still
// commits: exit 0), and once two of three are gone it says "no quorum" plainly and exits non-zero.
func TestE2E_StatusSeesADeadMemberAndALostQuorum(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three coordinator processes")
	}
	c, st := startThree(t)
	// The leader is killed first, as in the report: it was still shown as a voter with its last
	// round trip.
	first := c.proc(st.LeaderID)
	var rest []*proc
	for _, p := range c.procs {
		if p != first {
			rest = append(rest, p)
		}
	}
	kill := func(p *proc) {
		t.Helper()
		if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-p.exited
	}
	asked := rest[0]
	// A running cluster: the member asked has heard from the leader.
	testkit.WaitFor(t, 60*time.Second, "status to show the leader reachable", func() (bool, string) {
		out, err := c.cli("status", "--timeout", "5s", "--addr", asked.apiURL)
		return err == nil && regexp.MustCompile(`(?m)^`+first.id+`\s.*\sreachable, last contact \S+ ago`).MatchString(out), out
	})
	kill(first)
	row := regexp.MustCompile(`(?m)^` + first.id + `\s.*unreachable, last contact \S+ ago`)
	testkit.WaitFor(t, 60*time.Second, "status to show the killed leader unreachable with its last contact", func() (bool, string) {
		out, err := c.cli("status", "--timeout", "5s", "--addr", asked.apiURL)
		return err == nil && row.MatchString(out) && !strings.Contains(out, "no quorum"), out
	})
	out, err := c.cli("status", "--json", "--timeout", "5s", "--addr", asked.apiURL)
	if err != nil {
		t.Fatalf("status --json with two of three members: %v", err)
	}
	var js api.StatusResponse
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatal(err)
	}
	if js.Quorum == nil || !*js.Quorum {
		t.Fatalf("status --json with two of three members does not report a quorum: %s", out)
	}
	for _, m := range js.Members {
		if m.ID == first.id && (m.Reachable == nil || *m.Reachable || m.LastContact == nil) {
			t.Fatalf("status --json shows the killed member as %+v", m)
		}
	}

	kill(rest[1])
	testkit.WaitFor(t, 60*time.Second, "status to say there is no quorum and exit non-zero", func() (bool, string) {
		out, err := c.cli("status", "--timeout", "5s", "--addr", asked.apiURL)
		var ee *exec.ExitError
		return errors.As(err, &ee) && ee.ExitCode() != 0 && strings.Contains(out, "no quorum") && strings.Contains(err.Error(), "no quorum"), out
	})
}
