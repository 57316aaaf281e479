// SPDX-License-Identifier: Apache-2.0

package main

import (
	"github.com/spf13/cobra"
)

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "muster-sandbox",
		Short:         "A local Choria fleet in provisioning mode: embedded brokers, real and emulated nodes, an action recorder",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newUpCommand(), newReportCommand(), newNodeCommand(), newRunCommand(), newChaosCommand())
	return root
}
