// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/seed96588659/muster/sandbox/demo"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

type runFlags struct {
	dir          string
	binDir       string
	real         int
	emulated     int
	workers      int
	timeout      time.Duration
	noTTY        bool
	exitWhenDone bool
	failover     bool
}

func newRunCommand() *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run --dir DIR",
		Short: "make run: a two-region lab, three muster-coordinator members, one cluster-mode muster-edge per region with the sample helper; live progress, a summary, then the cluster keeps running until Ctrl-C stops everything",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDemo(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", "", "directory for the lab, the logs and the report (required; use a fresh one)")
	fl.StringVar(&f.binDir, "bin", "", "directory of muster-edge, muster-helper-sample and muster-coordinator (default: this binary's)")
	fl.IntVar(&f.real, "real", demo.DefaultReal, "real go-choria nodes per region (every other one needs an upgrade)")
	fl.IntVar(&f.emulated, "emulated", demo.DefaultEmulated, "emulated nodes per region, at least 10 (a few need an upgrade, five are faulty)")
	fl.IntVar(&f.workers, "workers", 0, "workers of each edge (0: the edge's default)")
	fl.DurationVar(&f.timeout, "timeout", demo.DefaultTimeout, "give up if the plan is not reached by then")
	fl.BoolVar(&f.noTTY, "no-tty", false, "print the bars every few seconds instead of redrawing them (automatic when stdout is no terminal)")
	fl.BoolVar(&f.exitWhenDone, "exit", false, "stop everything after the summary instead of waiting for Ctrl-C")
	fl.BoolVar(&f.failover, "failover", false, "after the summary, kill -9 the leader, wait for a new one, and check every edge follows it (a pause and a resume reach them)")
	return cmd
}

func runDemo(ctx context.Context, f *runFlags) error {
	if f.dir == "" {
		return fmt.Errorf("flag --dir is required")
	}
	if f.real < 0 {
		return fmt.Errorf("flag --real: %d is negative", f.real)
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own binary for real nodes: %w", err)
	}
	binDir := f.binDir
	if binDir == "" {
		binDir = filepath.Dir(self)
	}
	real := f.real
	if real == 0 {
		real = demo.NoReal
	}
	// A terminal of unknown width (a pty nobody sized) gets the plain output: mpb draws nothing
	// in zero columns.
	tty := false
	if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil && w > 0 && !f.noTTY {
		tty = true
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := demo.Run(ctx, demo.Options{
		Dir: f.dir, Real: real, Emulated: f.emulated, BinDir: binDir, NodeBinary: self,
		Out: os.Stdout, TTY: tty, ExitWhenDone: f.exitWhenDone, Failover: f.failover, Timeout: f.timeout, Workers: f.workers,
		Command: os.Args[0],
	})
	if err != nil && res != nil && ctx.Err() != nil && res.Summarised && len(res.Leftover) == 0 {
		// Ctrl-C after the summary is how an interactive run ends.
		return nil
	}
	return err
}
