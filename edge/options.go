// SPDX-License-Identifier: Apache-2.0

package edge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/edge/journal"
	"github.com/seed96588659/muster/pkg/metrics"
)

// Options configure an Edge: start from DefaultOptions, then set Flow, Mode, Finder and
// Metrics, which have no default.
type Options struct {
	Site   string
	Region string
	// Name is the edge's name towards its lease source.
	Name string
	// Workers bounds the host flows in flight; default 64 (the work is I/O bound).
	Workers int
	// BatchSize bounds the nodes of one acquire; default 256.
	BatchSize int
	// Interval spaces discovery sweeps; default one minute.
	Interval time.Duration
	// LifecycleComponent is the component of the startup events nodes announce.
	LifecycleComponent string
	// LeaseMargin is taken off every lease's TTL before the edge stops acting on it; default 2s.
	LeaseMargin time.Duration
	// ConfirmAfter is how long after an unanswered restart, release_update or shutdown the
	// edge looks for the node again; default 10s (restart splay plus a process start).
	ConfirmAfter time.Duration
	// DrainGrace is how long host flows in flight may run on once Run's context ends: each
	// stops at its next attempt boundary (given back) and a call waiting for its reply may get
	// it; then they are cancelled. Default 5s: an answering node replies in well under that,
	// and the whole stop stays inside the callers' SIGKILL timeouts (10 s in the sandbox). A
	// restart, release_update or shutdown cut off unanswered stays in the journal.
	DrainGrace time.Duration
	// RegisterFresh is how old a sighting may be when it is registered; older ones are dropped
	// and a sweep soon after looks again, and a register is given up once its oldest sighting
	// reaches it. A sighting delivered late could queue again a node another edge provisioned
	// meanwhile (a finished node seen again is queued after the coordinator's
	// lease.reprovision_after), so it plus a sweep's length stays below that (30 s by default;
	// 4 s in the chaos lab). Default 2s.
	RegisterFresh time.Duration
	// AcquireWait is how long one acquire may wait for waiting nodes; default 1s.
	AcquireWait time.Duration
	// Journal, when set, records every restart, release_update and shutdown before it is sent
	// and closes the record once its result's report was answered; Replay are the records a
	// previous run left open, settled by rediscovery and reported under their own lease.
	Journal Journal
	Replay  []journal.Intent

	// Check, when set, asks a node this edge has not seen answer before whether it answers: one
	// short request, no retry (app sends rpcutil#ping). Only one that answers is registered; an
	// identity discovery named that does not answer costs nothing more.
	Check func(ctx context.Context, identity string) (bool, error)
	// CheckConcurrency bounds the checks in flight; default 256.
	CheckConcurrency int
	// CheckRound is how long a round of checks waits for its slowest before it hands on, in
	// order, those that answered; later answers go on as they come. Default 250 ms: a node
	// answers a ping in milliseconds, and one that never answers must not hold the rest of its
	// round for the check's whole timeout.
	CheckRound time.Duration
	// KnownLimit bounds the identities remembered as having answered; default 100,000 (one
	// forgotten is checked again at its next sighting).
	KnownLimit int
	// NewPerSweep bounds the new identities one sweep takes in (chosen at random when more
	// answer); the rest wait for a later sweep. Default 10,000.
	NewPerSweep int
	// NewRate and NewBurst bound the new identities taken in, from sweeps and startup events
	// together: NewBurst at once, NewRate a second after. Defaults 1,000 and 10,000.
	NewRate  float64
	NewBurst int

	// Leadership, when set, is the election the edge takes part in: it provisions only while it
	// leads (leader_election).
	Leadership Leadership

	Flow Flow
	// Mode is Standalone or Cluster over the lease source.
	Mode    Mode
	Finder  Finder
	Metrics *metrics.Registry
	Logger  *slog.Logger
	// Now must return monotonic readings; default time.Now.
	Now func() time.Time
	// Wall is the wall clock journal intents are dated by (a restarted edge reads them with
	// it); default time.Now.
	Wall func() time.Time
	// OnResult, when set, sees every final result (after confirmation), e.g. for progress bars.
	OnResult func(hostflow.Result)
}

// DefaultOptions returns the options every edge starts from; the defaults are in each field's
// documentation.
func DefaultOptions() Options {
	return Options{
		Workers:            64,
		BatchSize:          256,
		Interval:           time.Minute,
		LifecycleComponent: "provision_mode_server",
		LeaseMargin:        2 * time.Second,
		ConfirmAfter:       10 * time.Second,
		DrainGrace:         5 * time.Second,
		RegisterFresh:      2 * time.Second,
		AcquireWait:        time.Second,
		CheckConcurrency:   256,
		CheckRound:         250 * time.Millisecond,
		KnownLimit:         100_000,
		NewPerSweep:        10_000,
		NewRate:            1000,
		NewBurst:           10_000,
		Logger:             slog.New(slog.DiscardHandler),
		Now:                time.Now,
		Wall:               time.Now,
	}
}

// Validate refuses options an edge cannot run with, naming the field.
func (o Options) Validate() error {
	switch {
	case o.Flow == nil:
		return errors.New("edge: a host flow is required")
	case o.Mode.source == nil:
		return errors.New("edge: a lease source is required (Mode: edge.Standalone or edge.Cluster)")
	case o.Finder == nil:
		return errors.New("edge: a finder (discovery) is required")
	case o.Metrics == nil:
		return errors.New("edge: a metrics registry is required")
	case o.Logger == nil:
		return errors.New("edge: Logger is nil (slog.DiscardHandler discards)")
	case o.Now == nil || o.Wall == nil:
		return errors.New("edge: Now and Wall are required clocks (time.Now)")
	case o.LifecycleComponent == "":
		return errors.New("edge: LifecycleComponent is empty")
	}
	for _, n := range []struct {
		field string
		v     int
	}{
		{"Workers", o.Workers}, {"BatchSize", o.BatchSize}, {"CheckConcurrency", o.CheckConcurrency},
		{"KnownLimit", o.KnownLimit}, {"NewPerSweep", o.NewPerSweep}, {"NewBurst", o.NewBurst},
	} {
		if n.v < 1 {
			return fmt.Errorf("edge: %s is %d, want at least 1", n.field, n.v)
		}
	}
	if !(o.NewRate > 0) {
		return fmt.Errorf("edge: NewRate is %v, want a positive number of identities a second", o.NewRate)
	}
	for _, d := range []struct {
		field string
		v     time.Duration
	}{
		{"Interval", o.Interval}, {"LeaseMargin", o.LeaseMargin}, {"ConfirmAfter", o.ConfirmAfter},
		{"DrainGrace", o.DrainGrace}, {"RegisterFresh", o.RegisterFresh}, {"AcquireWait", o.AcquireWait},
	} {
		if d.v <= 0 {
			return fmt.Errorf("edge: %s is %s, want a positive duration", d.field, d.v)
		}
	}
	return nil
}
