// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed96588659/muster/sandbox/chaos"
	"github.com/seed96588659/muster/sandbox/stack/wan"
)

type chaosFlags struct {
	dir      string
	rounds   int
	seed     uint64
	emulated int
	real     int
	faults   string
	keep     bool
	goOn     bool
	binDir   string
	ttl      time.Duration
	round    time.Duration
	profile  string
}

func newChaosCommand() *cobra.Command {
	f := &chaosFlags{}
	cmd := &cobra.Command{
		Use:   "chaos [--rounds N] [--seed S] [--dir DIR]",
		Short: "Run the chaos suite: 3 coordinators, edges in two regions, a lab, faults each alone and mixed, checks after every round, a summary table",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runChaos(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", "", "work directory, made when missing and refused when not empty (default: a new temporary one, removed after a pass unless --keep); kept when a check fails")
	fl.IntVar(&f.rounds, "rounds", 20, "rounds to run")
	fl.Uint64Var(&f.seed, "seed", 0, "seed of every random choice (0: a random one, printed first)")
	fl.IntVar(&f.emulated, "emulated", 300, "emulated nodes per region, provisioned again every round")
	fl.IntVar(&f.real, "real", 1, "real node processes per region, provisioned in round 1")
	fl.StringVar(&f.faults, "faults", "", "comma-separated faults to draw from (default all but member-downgrade, node-rebuilt and node-flapping, which run only when named)")
	fl.BoolVar(&f.keep, "keep", false, "keep the work directory after a passing run")
	fl.BoolVar(&f.goOn, "keep-going", false, "run the remaining rounds after one fails its checks (the run still fails)")
	fl.StringVar(&f.binDir, "bin-dir", "", "prebuilt muster-coordinator (-tags muster_failpoints), muster-edge, muster-helper-sample")
	fl.DurationVar(&f.ttl, "lease-ttl", 6*time.Second, "lease TTL of coordinators and edges")
	fl.DurationVar(&f.round, "round-timeout", 2*time.Minute, "longest a round may take to provision every node")
	fl.StringVar(&f.profile, "profile", "lan", "where members and edges run: lan, 3dc (members 20/40/80 ms apart, each edge next to one) or far-region (one edge 150 ms from every member)")
	return cmd
}

func runChaos(ctx context.Context, f *chaosFlags) error {
	kinds, err := chaos.ParseKinds(f.faults)
	if err != nil {
		return fmt.Errorf("flag --faults: %w", err)
	}
	profile, err := wan.Parse(f.profile)
	if err != nil {
		return fmt.Errorf("flag --profile: %w", err)
	}
	dir, owned, err := chaosDir(f)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own binary for real nodes: %w", err)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	logf, err := os.OpenFile(filepath.Join(dir, "chaos.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	o := chaos.DefaultOptions()
	o.Dir, o.Rounds, o.Seed, o.Emulated, o.Real, o.NodeBinary = dir, f.rounds, f.seed, f.emulated, f.real, self
	o.BinDir, o.KeepGoing, o.RoundTimeout, o.Out, o.Profile = f.binDir, f.goOn, f.round, os.Stdout, profile
	// The long poll is a third of the lease, the most the coordinators allow.
	o.LeaseTTL, o.MaxWait = f.ttl, f.ttl/3
	if len(kinds) > 0 {
		o.Kinds = kinds
	}
	o.Logger = slog.New(slog.NewTextHandler(logf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	_, err = chaos.Run(ctx, o)
	if err != nil {
		return err
	}
	if owned && !f.keep {
		return os.RemoveAll(dir)
	}
	return nil
}

// chaosDir is the run's work directory, absolute, and whether the run made it and so removes it
// after a pass: a new temporary one, or the one --dir names, made when missing and refused when
// it holds anything (the operator's files must never share a directory the run may remove, nor
// an earlier run's logs mix with this one's).
func chaosDir(f *chaosFlags) (string, bool, error) {
	if f.dir == "" {
		dir, err := os.MkdirTemp("", "muster-chaos-")
		return dir, true, err
	}
	dir, err := filepath.Abs(f.dir)
	if err != nil {
		return "", false, fmt.Errorf("flag --dir: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", false, fmt.Errorf("flag --dir: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", false, fmt.Errorf("flag --dir: %w", err)
	}
	if len(entries) > 0 {
		return "", false, fmt.Errorf("flag --dir %s is not empty (it holds %s): name a new directory, or remove this one", dir, entries[0].Name())
	}
	return dir, false, nil
}
