// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/seed96588659/muster/sandbox/fleet/lab"
)

// Defaults of Options.
const (
	DefaultReal      = 2
	DefaultEmulated  = 300
	DefaultTimeout   = 5 * time.Minute
	DefaultScrape    = 300 * time.Millisecond
	DefaultStopGrace = 10 * time.Second
	// DefaultCoordinators is the cluster's size.
	DefaultCoordinators = 3
	// OldVersion is what the nodes that need an upgrade report at first.
	OldVersion = lab.DefaultBaseVersion
	// TargetVersion is what the other nodes report and the helper asks for.
	TargetVersion = lab.DefaultUpgradeVersion
)

// Names of the files Run writes inside Options.Dir, and of the binaries it runs.
const (
	LabDirName = "lab"
	// CoordinatorDirName holds each member's data dir and log (c1, c1.log, ...).
	CoordinatorDirName = "coordinators"
	// CredentialsName is the shell file (mode 0600) of the run's admin and edge tokens.
	CredentialsName = "credentials.env"
	RunLogName      = "run.log"
	ReportName      = "report.json"
	EdgeName        = "muster-edge"
	HelperName      = "muster-helper-sample"
	CoordinatorName = "muster-coordinator"
	minEmulated     = 10
	refreshPeriod   = 5 * time.Second
)

// DefaultRegions are the lab's regions, one edge each.
func DefaultRegions() []string { return []string{"eu", "us"} }

// EdgeLogName is the log of region's edge inside Options.Dir.
func EdgeLogName(region string) string { return "edge-" + region + ".log" }

// Options configure a run.
type Options struct {
	// Dir receives the lab, the edge's log, this run's log and the final report; created if missing.
	Dir string
	// Regions are the lab's regions, each with its own broker, fleet and edge; default
	// DefaultRegions.
	Regions []string
	// Real is the number of real go-choria node processes per region; default DefaultReal (0
	// means default, NoReal means none).
	Real int
	// Emulated is the number of emulated nodes per region, at least 10; default DefaultEmulated.
	Emulated int
	// Coordinators is the number of muster-coordinator members; default DefaultCoordinators.
	Coordinators int
	// BinDir holds muster-edge, muster-helper-sample and muster-coordinator (make build's ./bin).
	BinDir string
	// NodeBinary is the muster-sandbox binary real nodes run (the running one, for the command).
	NodeBinary string
	// Out is where progress, the summary and hints go.
	Out io.Writer
	// TTY draws live bars; otherwise the bars are printed as a block every few seconds, readable
	// in CI logs.
	TTY bool
	// ExitWhenDone returns after the summary instead of running until the context ends.
	ExitWhenDone bool
	// Failover, after the summary, kills the leader with SIGKILL, waits for the others to elect
	// a new one with the ledger intact, then pauses and resumes the cluster and waits for every
	// edge to learn both: the edges follow the new leader.
	Failover bool
	// Timeout bounds the time to reach "done"; default DefaultTimeout.
	Timeout time.Duration
	// Scrape is how often the edges' /metrics and the coordinators' status are read; default
	// DefaultScrape.
	Scrape time.Duration
	// Workers is the edge's worker count; 0 keeps the edge's default.
	Workers int
	// StopGrace is how long an edge or a coordinator may take to stop after SIGTERM before
	// SIGKILL; default DefaultStopGrace.
	StopGrace time.Duration
	// Command is how hints call muster-sandbox; default "muster-sandbox". Hints call
	// muster-coordinator in BinDir, relative to the working directory when below it.
	Command string
	// Logger receives this run's own messages and the lab's (keep it off the terminal: the bars
	// own it); nil writes them to Dir/run.log.
	Logger *slog.Logger
}

// NoReal asks for a lab without real nodes (Real's zero value means the default).
const NoReal = -1

func (o Options) withDefaults() (Options, error) {
	if o.Dir == "" {
		return o, fmt.Errorf("demo: Dir is required")
	}
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return o, fmt.Errorf("demo: dir %q: %w", o.Dir, err)
	}
	o.Dir = abs
	switch {
	case o.Real == 0:
		o.Real = DefaultReal
	case o.Real == NoReal:
		o.Real = 0
	case o.Real < 0:
		return o, fmt.Errorf("demo: real node count %d is negative", o.Real)
	}
	if len(o.Regions) == 0 {
		o.Regions = DefaultRegions()
	}
	if o.Coordinators == 0 {
		o.Coordinators = DefaultCoordinators
	}
	if o.Coordinators < 1 {
		return o, fmt.Errorf("demo: coordinator count %d: want at least 1", o.Coordinators)
	}
	if o.Emulated == 0 {
		o.Emulated = DefaultEmulated
	}
	if o.Emulated < minEmulated {
		return o, fmt.Errorf("demo: emulated node count %d: want at least %d (the faulty and outdated nodes are emulated)", o.Emulated, minEmulated)
	}
	if o.BinDir == "" {
		return o, fmt.Errorf("demo: BinDir (where %s, %s and %s are) is required", EdgeName, HelperName, CoordinatorName)
	}
	if o.Real > 0 && o.NodeBinary == "" {
		return o, fmt.Errorf("demo: NodeBinary is required for %d real nodes", o.Real)
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Scrape <= 0 {
		o.Scrape = DefaultScrape
	}
	if o.Workers < 0 {
		return o, fmt.Errorf("demo: workers %d is negative", o.Workers)
	}
	if o.StopGrace <= 0 {
		o.StopGrace = DefaultStopGrace
	}
	return o, nil
}
