// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"text/tabwriter"

	"github.com/seed96588659/muster/sandbox/fleet/audit"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/spf13/cobra"
)

// maxNamed bounds the nodes a summary names in one list.
const maxNamed = 10

func newReportCommand() *cobra.Command {
	var asJSON bool
	short := "Summarise DIR/actions.jsonl: totals per action, provisioned and double-provisioned nodes (--json: the whole report, per node)"
	cmd := dirCommand("report --dir DIR", short, "the lab directory given to up (required)", func(cmd *cobra.Command, dir string) error {
		r, err := audit.FromFile(filepath.Join(dir, lab.ActionsFileName))
		if err != nil {
			return err
		}
		if asJSON {
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(r)
		}
		return printReport(cmd.OutOrStdout(), r, cmd.CommandPath()+" --dir "+dir+" --json")
	})
	// The whole report lists every node's actions and callers: a megabyte at a thousand nodes,
	// for a program, not a terminal.
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the whole report as JSON: every node with its actions and callers")
	return cmd
}

// printReport writes what a person reads of the report; whole names the command for the rest.
func printReport(w io.Writer, r audit.Report, whole string) error {
	t := r.Totals
	fmt.Fprintf(w, "%d actions (%d ok, %d refused) from %d callers to %d nodes\n\n", t.Actions, t.OK, t.Failed, t.Callers, t.Nodes)
	ok, failed := map[string]int{}, map[string]int{}
	var refused []string
	for _, id := range slices.Sorted(maps.Keys(r.Nodes)) {
		refusedOne := false
		for a, c := range r.Nodes[id].Actions {
			ok[a] += c.OK
			failed[a] += c.Failed
			refusedOne = refusedOne || c.Failed > 0
		}
		if refusedOne {
			refused = append(refused, id)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ACTION\tCOUNT\tOK\tREFUSED")
	for _, a := range slices.Sorted(maps.Keys(t.ByAction)) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", a, t.ByAction[a], ok[a], failed[a])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nprovisioned: %d nodes\n", t.Provisioned)
	named(w, "nodes that refused an action", refused)
	verdict := "none: no node accepted changes from two callers in one episode"
	if t.DoubleProvisioned > 0 {
		verdict = fmt.Sprintf("%d episode(s): FAILED", t.DoubleProvisioned)
	}
	fmt.Fprintf(w, "double provisioned: %s\n", verdict)
	for _, d := range r.DoubleProvisioned {
		fmt.Fprintf(w, "double provisioned: %s (region %s, episode %d) by %v\n", d.Node, d.Region, d.Episode, d.Callers)
	}
	_, err := fmt.Fprintf(w, "\nthe whole report, every node with its actions and callers: %s\n", whole)
	return err
}

// named lists up to maxNamed of items under what, and how many more there are.
func named(w io.Writer, what string, items []string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(w, "%s (%d):", what, len(items))
	for i, it := range items {
		if i == maxNamed {
			fmt.Fprintf(w, " ... and %d more", len(items)-maxNamed)
			break
		}
		fmt.Fprintf(w, " %s", it)
	}
	fmt.Fprintln(w)
}

// dirCommand is a command of no arguments and one required flag, --dir (described by usage),
// whose value run gets.
func dirCommand(use, short, usage string, run func(cmd *cobra.Command, dir string) error) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return fmt.Errorf("flag --dir is required")
			}
			return run(cmd, dir)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", usage)
	return cmd
}
