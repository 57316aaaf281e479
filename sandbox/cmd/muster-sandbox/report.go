// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/seed96588659/muster/sandbox/fleet/audit"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/spf13/cobra"
)

func newReportCommand() *cobra.Command {
	short := "Print a JSON report of DIR/actions.jsonl: totals, per-node actions and callers, provisioned and double-provisioned nodes"
	return dirCommand("report --dir DIR", short, "the lab directory given to up (required)", func(cmd *cobra.Command, dir string) error {
		r, err := audit.FromFile(filepath.Join(dir, lab.ActionsFileName))
		if err != nil {
			return err
		}
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	})
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
