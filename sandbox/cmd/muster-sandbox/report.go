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
	var dir string
	cmd := &cobra.Command{
		Use:   "report --dir DIR",
		Short: "Print a JSON report of DIR/actions.jsonl: totals, per-node actions and callers, provisioned and double-provisioned nodes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return fmt.Errorf("flag --dir is required")
			}
			r, err := audit.FromFile(filepath.Join(dir, lab.ActionsFileName))
			if err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(r)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "the lab directory given to up (required)")
	return cmd
}
