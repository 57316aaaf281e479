// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"context"
	"fmt"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// pending names the nodes the ledger still has waiting or leased, at most maxListed+1 (the
// summary names maxListed), each with its plan, attempts and when it is offered again. A read
// that fails is named instead: the summary's counts still say how many there are.
func (r *runner) pending(ctx context.Context) []string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var out []string
	for _, region := range r.o.Regions {
		for _, st := range []api.NodeState{api.StateWaiting, api.StateLeased} {
			page, err := r.cluster.admin.Nodes(ctx, api.NodeFilter{Region: region, State: st, Limit: maxListed + 1})
			if err != nil {
				return append(out, fmt.Sprintf("(could not read the %s nodes of %s: %v)", st, region, err))
			}
			for _, n := range page.Nodes {
				out = append(out, r.pendingLine(n))
			}
		}
	}
	return out
}

// pendingLine is one pending node: what the plan expects of it and where the ledger has it.
func (r *runner) pendingLine(n api.Node) string {
	line := fmt.Sprintf("%s: %s, %d of %d attempts made", n.Identity, n.State, n.Attempts, coordinatorLease.MaxAttempts)
	if p := r.plans[n.Region]; p != nil && p.expect[n.Identity] != 0 {
		line += fmt.Sprintf(" (planned: %s)", p.expect[n.Identity])
	}
	if n.State == api.StateWaiting && !n.NotBefore.IsZero() {
		line += ", offered again after " + n.NotBefore.Local().Format(time.TimeOnly)
	}
	if n.LastError != "" {
		line += ", last error: " + api.Printable(n.LastError)
	}
	return line
}
