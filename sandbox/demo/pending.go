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
	nodes, err := r.ledgerNodes(ctx, api.StateWaiting, api.StateLeased)
	out := make([]string, 0, len(nodes)+1)
	for _, n := range nodes {
		out = append(out, r.pendingLine(n))
	}
	if err != nil {
		out = append(out, "("+err.Error()+")")
	}
	return out
}

// ledgerNodes reads, region by region and state by state, at most maxListed+1 nodes of each
// state from the coordinators; the error names the read that failed, after what was read.
func (r *runner) ledgerNodes(ctx context.Context, states ...api.NodeState) ([]api.Node, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var out []api.Node
	for _, region := range r.o.Regions {
		for _, st := range states {
			page, err := r.cluster.admin.Nodes(ctx, api.NodeFilter{Region: region, State: st, Limit: maxListed + 1})
			if err != nil {
				return out, fmt.Errorf("could not read the %s nodes of %s: %w", st, region, err)
			}
			out = append(out, page.Nodes...)
		}
	}
	return out, nil
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
