// SPDX-License-Identifier: Apache-2.0

package coordproc

import (
	"strings"
	"testing"

	"github.com/seed96588659/muster/sandbox/internal/childproc"
)

// TestMember_JoinViaReplacesBootstrapAndAnEarlierJoin: a member restarted without its state
// joins through the others and never bootstraps a cluster of its own again; Use changes the
// binary and nothing else.
func TestMember_JoinViaReplacesBootstrapAndAnEarlierJoin(t *testing.T) {
	m := &Member{ID: "c1", proc: &childproc.Proc{Bin: "/old/muster-coordinator",
		Args: []string{"serve", "--node-id", "c1", "--bootstrap", "--log-level", "info"}}}
	m.JoinVia([]string{"http://127.0.0.1:1", "http://127.0.0.1:2"})
	m.JoinVia([]string{"http://127.0.0.1:3"})
	m.Use("/new/muster-coordinator")
	if got, want := strings.Join(m.proc.Args, " "), "serve --node-id c1 --log-level info --join http://127.0.0.1:3"; got != want {
		t.Errorf("args %q, want %q", got, want)
	}
	if m.Bin() != "/new/muster-coordinator" {
		t.Errorf("bin %q after Use", m.Bin())
	}
}
