// SPDX-License-Identifier: Apache-2.0

// Command muster-edge provisions the Choria nodes of one region: `muster-edge run --config FILE`
// takes choria-provisioner's configuration unchanged.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/seed96588659/muster/edge/app"
	"github.com/seed96588659/muster/pkg/godefaults"
	"github.com/seed96588659/muster/pkg/version"
)

// main applies the edge's Go runtime settings unless GOMEMLIMIT names another. Its work
// is many small host flows whose garbage the collector would otherwise let grow to twice the
// live heap; with a limit it collects earlier instead, which keeps 1,000 hosts in flight under
// 64 MB.
func main() {
	godefaults.Defaults{MemoryLimit: 32 << 20}.Apply(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := root().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "muster-edge:", err)
		var se *app.StartError
		if errors.As(err, &se) && se.Remedy != "" {
			fmt.Fprintln(os.Stderr, "muster-edge: remedy:", se.Remedy)
		}
		os.Exit(1)
	}
}

func root() *cobra.Command {
	cmd := &cobra.Command{
		Use:           "muster-edge",
		Short:         "Provision the Choria nodes of one region",
		Version:       version.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.AddCommand(runCommand(), planCommand())
	return cmd
}
