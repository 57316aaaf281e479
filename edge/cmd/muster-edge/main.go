// SPDX-License-Identifier: Apache-2.0

// Command muster-edge provisions the Choria nodes of one region: `muster-edge run --config FILE`
// takes choria-provisioner's configuration unchanged; `muster-edge run --lab DIR/lab.json`
// runs against a sandbox lab with no other set-up.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := root().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "muster-edge:", err)
		os.Exit(1)
	}
}

func root() *cobra.Command {
	cmd := &cobra.Command{
		Use:           "muster-edge",
		Short:         "Provision the Choria nodes of one region",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.AddCommand(runCommand())
	return cmd
}
