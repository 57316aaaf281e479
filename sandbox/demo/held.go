// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/seed96588659/muster/pkg/api"
)

// printHeld names the held queue after the summary, each node with why it is held and what
// the plan expected, then the commands that approve or deny one (docs/approvals.md says what to
// check first).
func (r *runner) printHeld(ctx context.Context) {
	nodes, err := r.ledgerNodes(ctx, api.StateHeld)
	if err != nil {
		r.say("\n(the held queue: %v)", err)
	}
	if len(nodes) == 0 {
		return
	}
	r.say("\nheld for approval (%d): the coordinators offer these to no edge until an operator approves them (docs/approvals.md)", len(nodes))
	for i, n := range nodes {
		if i == maxListed {
			r.say("  ... and %d more", len(nodes)-maxListed)
			break
		}
		r.say("  %s", heldLine(n, r.plans[n.Region]))
	}
	coord := r.binPath(CoordinatorName)
	addrs := strings.Join(r.cluster.URLs(), ",")
	id := nodes[0].Identity
	r.say("  with the admin token (. %s):", filepath.Join(r.o.Dir, CredentialsName))
	r.say("   %s nodes --addr %s --state held", coord, addrs)
	r.say("   %s approve --addr %s %s    # offer it to an edge again", coord, addrs, id)
	r.say("   %s ban --addr %s --reason 'not ours' %s    # deny it: never offered (unban returns it to the queue)", coord, addrs, id)
}

// heldLine is one held node: its reason and detail, and what the plan expected of it.
func heldLine(n api.Node, p *plan) string {
	line := n.Identity + " (" + n.Region + ")"
	if h := n.Hold; h != nil {
		line += ": " + h.Reason
		if h.Detail != "" {
			line += ", " + api.Printable(h.Detail)
		}
		if h.Edge != "" {
			line += ", seen by " + h.Edge
		}
	}
	if p != nil && p.expect[n.Identity] != 0 {
		line += fmt.Sprintf(" (planned: %s)", p.expect[n.Identity])
	}
	return line
}
