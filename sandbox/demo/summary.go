// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/sandbox/fleet/audit"
)

// maxListed bounds the missing and unexpected nodes a summary names.
const maxListed = 20

// Summary is what a run ends with.
type Summary struct {
	// Done is true when every node reached the end its plan expects.
	Done bool
	// Elapsed runs from the edges' start to done (or the timeout).
	Elapsed time.Duration
	// Nodes is the lab's node count.
	Nodes int
	// Healthy is the pace of the plan's healthy nodes (by the action log), from the edges' start.
	Healthy Pace
	// Planned and Met count nodes per expectation: how many there are, how many got there.
	Planned map[Expect]int
	Met     map[Expect]int
	// Missing and Unexpected come from the last evaluation (see status).
	Missing    []string
	Unexpected []string
	// Pending names the nodes the ledger still has waiting or leased, with their attempts: a
	// failed node is offered again until the coordinator abandons it, after the plan counts it.
	Pending []string
	// Outcomes is the edges' muster_edge_results_total by outcome, summed over the regions.
	Outcomes map[string]int64
	// Regions is each region's plan, ledger and edge, in the order of the run's regions.
	Regions []RegionSummary
	// Cluster is the coordinators' last status read.
	Cluster ClusterView
	// Report is the sandbox report of the action log.
	Report audit.Report
}

// RegionSummary is one region's end state.
type RegionSummary struct {
	Name string
	// Nodes is the region's node count; Succeed how many of them should end provisioned.
	Nodes, Succeed int
	// Ledger counts the region's nodes per state in the coordinators' ledger.
	Ledger map[api.NodeState]int
	// Edge is the region's edge's last metrics reading.
	Edge Snapshot
}

// NodesPerMinute is the rate of nodes provisioned (by the action log) over Elapsed.
func (s Summary) NodesPerMinute() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Report.Totals.Provisioned) / s.Elapsed.Minutes()
}

// Print writes the summary tables.
func (s Summary) Print(w io.Writer) {
	state := "done"
	if !s.Done {
		state = "NOT done"
	}
	pending := ""
	if n := s.pendingCount(); n > 0 {
		pending = fmt.Sprintf("; %d nodes still pending (listed below)", n)
	}
	fmt.Fprintf(w, "\n== %s after %s: %d nodes, %d provisioned, %.0f nodes/min over the whole run (faulty nodes and upgrades included)%s\n", state,
		s.Elapsed.Round(100*time.Millisecond), s.Nodes, s.Report.Totals.Provisioned, s.NodesPerMinute(), pending)
	fmt.Fprintf(w, "   %s\n\n", s.healthyLine())

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "REGION\tNODES\tTO PROVISION\tPROVISIONED\tDEFERRED\tSHUT DOWN\tABANDONED\tGONE\tHELD\tWAITING\tLEASED\tEDGE DISCOVERED\tEDGE FAILED")
	for _, r := range s.Regions {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", r.Name, r.Nodes, r.Succeed,
			r.Ledger[api.StateProvisioned], r.Ledger[api.StateDeferred], r.Ledger[api.StateShutdown], r.Ledger[api.StateAbandoned],
			r.Ledger[api.StateGone], r.Ledger[api.StateHeld], r.Ledger[api.StateWaiting], r.Ledger[api.StateLeased], r.Edge.Discovered, failedOutcomes(r.Edge))
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "(ledger states from the coordinators; %s)\n\n", describeView(s.Cluster, nil))

	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PLANNED END\tNODES\tREACHED")
	for _, e := range expectations() {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", e, s.Planned[e], s.Met[e])
	}
	fmt.Fprintln(tw, "\t\t")
	fmt.Fprintln(tw, "EDGE RESULT (muster_edge_results_total, both edges)\tCOUNT\t")
	for _, o := range hostflow.Outcomes() {
		fmt.Fprintf(tw, "%s\t%d\t\n", o, s.Outcomes[o.String()])
	}
	fmt.Fprintln(tw, "\t\t")
	t := s.Report.Totals
	fmt.Fprintln(tw, "SANDBOX REPORT (actions.jsonl)\tCOUNT\t")
	fmt.Fprintf(tw, "actions (ok / failed)\t%d\t%d / %d\n", t.Actions, t.OK, t.Failed)
	for _, a := range slices.Sorted(maps.Keys(t.ByAction)) {
		fmt.Fprintf(tw, "  %s\t%d\t\n", a, t.ByAction[a])
	}
	fmt.Fprintf(tw, "nodes that received requests\t%d\t\n", t.Nodes)
	fmt.Fprintf(tw, "callers\t%d\t\n", t.Callers)
	fmt.Fprintf(tw, "provisioned\t%d\t\n", t.Provisioned)
	fmt.Fprintf(tw, "double_provisioned\t%d\t%s\n", t.DoubleProvisioned, verdict(t.DoubleProvisioned == 0))
	_ = tw.Flush()

	list(w, "still missing", s.Missing)
	list(w, "unexpected", s.Unexpected)
	s.printPending(w)
	for _, d := range s.Report.DoubleProvisioned {
		fmt.Fprintf(w, "double provisioned: %s (episode %d) by %v\n", d.Node, d.Episode, d.Callers)
	}
}

// healthyLine says how long the healthy nodes took and their steady rate: what the fleet's
// pace is, apart from the deliberate faults and the real nodes' upgrades and restarts.
func (s Summary) healthyLine() string {
	h := s.Healthy
	line := fmt.Sprintf("healthy nodes: %d of %d provisioned", h.Nodes, s.Planned[Healthy])
	if h.Nodes > 0 {
		line += fmt.Sprintf(", the last %s after the edges started", h.Took.Round(10*time.Millisecond))
	}
	if h.SteadyPerMinute() == 0 {
		return line + "; no steady rate (too few completion times to span)"
	}
	return line + fmt.Sprintf("; steady rate %.0f nodes/min (the %dth to the %dth percentile of their completion times: %d nodes in %s)",
		h.SteadyPerMinute(), steadyLow, steadyHigh, h.SteadyNodes, (h.SteadyTo-h.SteadyFrom).Round(10*time.Millisecond))
}

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "FAILED"
}

func list(w io.Writer, what string, items []string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s (%d):\n", what, len(items))
	for i, it := range items {
		if i == maxListed {
			fmt.Fprintf(w, "  ... and %d more\n", len(items)-maxListed)
			break
		}
		fmt.Fprintf(w, "  %s\n", it)
	}
}

// pendingCount is how many nodes the ledger still has waiting or leased.
func (s Summary) pendingCount() int {
	n := 0
	for _, r := range s.Regions {
		n += r.Ledger[api.StateWaiting] + r.Ledger[api.StateLeased]
	}
	return n
}

// printPending says, per region, what the ledger has not settled yet, and names those nodes.
func (s Summary) printPending(w io.Writer) {
	if s.pendingCount() == 0 {
		return
	}
	fmt.Fprintf(w, "\nstill pending in the ledger (%d nodes): a failed node is offered again until its last attempt, then abandoned\n", s.pendingCount())
	for _, r := range s.Regions {
		var parts []string
		for _, st := range []api.NodeState{api.StateWaiting, api.StateLeased} {
			if n := r.Ledger[st]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, st))
			}
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "  %s: %s\n", r.Name, strings.Join(parts, ", "))
		}
	}
	for i, p := range s.Pending {
		if i == maxListed {
			fmt.Fprintf(w, "  ... and %d more\n", len(s.Pending)-maxListed)
			break
		}
		fmt.Fprintf(w, "  %s\n", p)
	}
}
