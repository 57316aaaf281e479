// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/seed96588659/muster/sandbox/fleet/realnode"
	"github.com/spf13/cobra"
)

// newNodeCommand is the hidden command a real node process runs, from its own copy of this
// binary, with an absolute argv[0] so restart and release_update can re-exec it.
func newNodeCommand() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:    "node --dir NODEDIR",
		Short:  "Run one real Choria server (started by up; not for direct use)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return fmt.Errorf("flag --dir is required")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return realnode.Run(ctx, dir)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "the node's directory")
	return cmd
}
