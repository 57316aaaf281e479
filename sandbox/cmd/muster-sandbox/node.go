// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/seed96588659/muster/sandbox/fleet/realnode"
	"github.com/spf13/cobra"
)

// newNodeCommand is the hidden command a real node process runs, from its own copy of this
// binary, with an absolute argv[0] so restart and release_update can re-exec it.
func newNodeCommand() *cobra.Command {
	cmd := dirCommand("node --dir NODEDIR", "Run one real Choria server (started by up; not for direct use)", "the node's directory",
		func(cmd *cobra.Command, dir string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return realnode.Run(ctx, dir)
		})
	cmd.Hidden = true
	return cmd
}
