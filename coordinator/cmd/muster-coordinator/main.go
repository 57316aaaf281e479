// SPDX-License-Identifier: Apache-2.0

// Command muster-coordinator runs a member of Muster's coordinator cluster (serve) and drives a
// running cluster through its admin API (status, nodes, node, pause, resume, join, remove, snapshot, retry);
// recover rewrites a stopped member's membership after quorum is lost for good.
package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/seed96588659/muster/pkg/godefaults"
	"github.com/seed96588659/muster/pkg/version"
)

// main applies a member's Go runtime settings unless GOMEMLIMIT or GOGC name others.
//
// The memory limit: a bulk register of a million nodes otherwise lets garbage grow to twice the
// live heap; with the limit the collector runs earlier instead (a 10,000-node load peaked at 115
// MB of heap instead of 194).
//
// GOGC 400: a member's live heap is small (the ledger is in bbolt's mapped file: 16 MB of
// anonymous memory at a million nodes), so at Go's 100 it collected several times a second while
// applying entries, 10-14% of each member's CPU in the ten-region benchmark, and the scavenger
// returned the freed memory for 2-8% more. The heap may now grow to five times the live one,
// still bounded by the memory limit when the live heap is large.
func main() {
	godefaults.Defaults{MemoryLimit: 128 << 20, GCPercent: 400}.Apply(os.Getenv)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command line and returns the process exit code.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		root.PrintErrln("error:", err)
		var ce *codedError
		if errors.As(err, &ce) {
			return ce.code
		}
		return 1
	}
	return 0
}

// codedError is a failure with an exit code of its own, so a script tells it from a command that
// could not run (1): status exits 2 when the cluster cannot commit.
type codedError struct {
	code int
	err  error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "muster-coordinator",
		Short:         "Muster's coordinator: the Raft-replicated node ledger and lease authority",
		Version:       version.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(
		newServeCmd(),
		newStatusCmd(),
		newNodesCmd(),
		newNodeCmd(),
		newPauseCmd(),
		newResumeCmd(),
		newJoinCmd(),
		newRemoveCmd(),
		newSnapshotCmd(),
		newRetryCmd(),
		newEventsCmd(),
		newRecoverCmd(),
	)
	root.AddCommand(newOperatorCmds()...)
	root.AddCommand(newApproveCmd())
	return root
}
