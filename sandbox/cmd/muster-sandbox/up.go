// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/seed96588659/muster/sandbox/fleet/faults"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/stack/edgefile"
	"github.com/spf13/cobra"
)

type upFlags struct {
	dir            string
	real           int
	emulated       int
	regions        string
	faultsFile     string
	faultFlags     []string
	baseVersion    string
	versions       []string
	upgradeVersion string
	clients        int
	timeScale      float64
	streams        bool
	electionTTL    time.Duration
}

func newUpCommand() *cobra.Command {
	f := &upFlags{}
	cmd := &cobra.Command{
		Use:   "up --dir DIR [--real N] [--emulated M] [--regions eu,us] [--faults FILE] [--streams]",
		Short: "Start the lab, write DIR/lab.json and each region's edge configuration, run until SIGINT or SIGTERM, then stop cleanly",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runUp(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", "", "directory for the lab's files (required)")
	fl.IntVar(&f.real, "real", 3, "real go-choria nodes per region (one process each)")
	fl.IntVar(&f.emulated, "emulated", 0, "emulated nodes per region")
	fl.StringVar(&f.regions, "regions", "eu", "comma-separated regions, each with its own broker")
	fl.StringVar(&f.faultsFile, "faults", "", "YAML file of faults for emulated nodes")
	fl.StringArrayVar(&f.faultFlags, "fault", nil, "a fault rule for emulated nodes (repeatable; rebuilt and flapping also reach real nodes selected by identity or glob): "+faults.FlagHelp)
	fl.StringVar(&f.baseVersion, "version", lab.DefaultBaseVersion, "version nodes report before an upgrade")
	fl.StringSliceVar(&f.versions, "versions", nil, "starting versions of real nodes, comma-separated: real node i gets the i-th, cycling (overrides --version for real nodes)")
	fl.StringVar(&f.upgradeVersion, "upgrade-version", lab.DefaultUpgradeVersion, "version offered by the updates repository")
	fl.IntVar(&f.clients, "clients", 3, "client identities per region (one per edge)")
	fl.Float64Var(&f.timeScale, "emulated-time-scale", 1, "multiplier of emulated restart/update delays")
	fl.BoolVar(&f.streams, "streams", false, "give each region's broker Choria Streams, so leader elections work for any Choria client of the lab (choria-provisioner's and muster-edge's leader_election)")
	fl.DurationVar(&f.electionTTL, "election-ttl", 0, "with --streams: how long an election's key outlives its leader's last campaign, at least 4s (default go-choria's 1m)")
	return cmd
}

// validate checks flags cobra cannot, naming the flag at fault.
func (f *upFlags) validate() ([]string, error) {
	if f.dir == "" {
		return nil, fmt.Errorf("flag --dir is required")
	}
	if f.real < 0 {
		return nil, fmt.Errorf("flag --real: %d is negative", f.real)
	}
	if f.emulated < 0 {
		return nil, fmt.Errorf("flag --emulated: %d is negative", f.emulated)
	}
	if f.real == 0 && f.emulated == 0 {
		return nil, fmt.Errorf("flags --real and --emulated: the lab needs at least one node")
	}
	if f.clients < 1 {
		return nil, fmt.Errorf("flag --clients: %d, want at least 1", f.clients)
	}
	for _, v := range f.versions {
		if v == "" || strings.ContainsAny(v, " /") {
			return nil, fmt.Errorf("flag --versions: %q is not a version", v)
		}
	}
	if f.electionTTL != 0 && !f.streams {
		return nil, fmt.Errorf("flag --election-ttl needs --streams: without Choria Streams there is no election")
	}
	if f.electionTTL != 0 && f.electionTTL < 4*time.Second {
		return nil, fmt.Errorf("flag --election-ttl: %v, want at least 4s (go-choria's election campaigns at 3/4 of it, at least 1s before it ends)", f.electionTTL)
	}
	if f.timeScale <= 0 {
		return nil, fmt.Errorf("flag --emulated-time-scale: %v, want more than 0", f.timeScale)
	}
	var regions []string
	for _, r := range strings.Split(f.regions, ",") {
		r = strings.TrimSpace(r)
		if r == "" {
			return nil, fmt.Errorf("flag --regions %q: empty region name", f.regions)
		}
		regions = append(regions, r)
	}
	return regions, nil
}

func (f *upFlags) faults() (*faults.Set, error) {
	var set *faults.Set
	if f.faultsFile != "" {
		s, err := faults.ParseFile(f.faultsFile)
		if err != nil {
			return nil, fmt.Errorf("flag --faults: %w", err)
		}
		set = s
	}
	if len(f.faultFlags) > 0 {
		s, err := faults.ParseFlags(f.faultFlags)
		if err != nil {
			return nil, fmt.Errorf("flag --fault: %w", err)
		}
		set = set.Merge(s)
	}
	return set, nil
}

func runUp(ctx context.Context, f *upFlags) error {
	regions, err := f.validate()
	if err != nil {
		return err
	}
	set, err := f.faults()
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own binary for real nodes: %w", err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	l, err := lab.Start(ctx, lab.Options{
		Dir: f.dir, Regions: regions, Real: f.real, Emulated: f.emulated, Faults: set,
		NodeBinary: self, BaseVersion: f.baseVersion, Versions: f.versions, UpgradeVersion: f.upgradeVersion,
		Clients: f.clients, EmulatedTimeScale: f.timeScale, Streams: f.streams, ElectionTTL: f.electionTTL, Logger: log,
	})
	if err != nil {
		return err
	}
	for _, r := range l.Regions() {
		log.Info("region up", "region", r.Name(), "broker", r.Broker().URL(), "real", len(r.RealNodes()), "emulated", len(r.EmulatedNodes()), "failed", len(r.Failed()),
			"streams", r.Broker().Streams())
	}
	printEdgeCommands(os.Stdout, l, filepath.Dir(self), log)
	log.Info("lab running; stop with SIGINT or SIGTERM", "lab", l.InfoFile(), "actions", l.ActionsFile())
	<-ctx.Done()
	log.Info("stopping lab")
	if err := l.Stop(); err != nil {
		return fmt.Errorf("stop lab: %w", err)
	}
	log.Info("lab stopped")
	return nil
}

// printEdgeCommands writes each region's edge configuration, which runs the sample helper next
// to this binary (make build puts both in bin/) with PKI on (the real nodes need their
// certificates to run after their restart), and prints the muster-edge command that uses it.
func printEdgeCommands(out io.Writer, l *lab.Lab, binDir string, log *slog.Logger) {
	helper := filepath.Join(binDir, edgefile.SampleHelper)
	for _, r := range l.Regions() {
		file, err := edgefile.Write(l, r.Name(), helper, edgefile.PKI())
		if err != nil {
			log.Warn("no edge configuration for the region", "region", r.Name(), "error", err)
			continue
		}
		fmt.Fprintf(out, "%s run --config %s\n", filepath.Join(binDir, "muster-edge"), file)
	}
}
