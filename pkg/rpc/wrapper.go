// SPDX-License-Identifier: Apache-2.0

package rpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/choria-io/go-choria/backoff"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed96588659/muster/pkg/metrics"
)

// PauseSource tells whether provisioning must stop; the edge answers true when the operator
// paused or when the lease covering the host is no longer valid.
type PauseSource interface {
	Paused() bool
}

// PauseFunc adapts a function to PauseSource.
type PauseFunc func() bool

// Paused calls f.
func (f PauseFunc) Paused() bool { return f() }

// Wrapper runs every RPC attempt of a site under one policy.
type Wrapper struct {
	site      string
	policy    backoff.Policy
	log       *slog.Logger
	time      *prometheus.SummaryVec
	errors    *prometheus.CounterVec
	shutdowns *prometheus.CounterVec
}

// WrapperOptions configure a Wrapper; Metrics is required.
type WrapperOptions struct {
	Site    string
	Metrics *metrics.Registry
	// Policy spaces the attempts; the zero value means go-choria's backoff.Default.
	Policy backoff.Policy
	Logger *slog.Logger
}

// NewWrapper builds a Wrapper.
func NewWrapper(o WrapperOptions) (*Wrapper, error) {
	if o.Metrics == nil {
		return nil, errors.New("rpc wrapper: a metrics registry is required")
	}
	if len(o.Policy.Millis) == 0 {
		o.Policy = backoff.Default
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Wrapper{
		site:      o.Site,
		policy:    o.Policy,
		log:       o.Logger,
		time:      o.Metrics.RPCTime,
		errors:    o.Metrics.RPCErrors,
		shutdowns: o.Metrics.HelperShutdownRequests,
	}, nil
}

// Run calls cb until it succeeds, at most tries times. action is the agent#action label.
//
// The try limit and the pause check live inside the backoff callback, as in choria-provisioner,
// so a provisioner that loses its lease stops at the next attempt boundary. When the callback
// ends the loop by cancelling, go-choria's For reports only "context canceled"; Run returns the
// reason instead (maximum tries, paused, lock held).
func (w *Wrapper) Run(ctx context.Context, pause PauseSource, action string, tries int, cb func(context.Context) error) error {
	return w.run(ctx, "", pause, action, tries, cb)
}

// run is Run whose log lines name node when a Node calls.
func (w *Wrapper) run(ctx context.Context, node string, pause PauseSource, action string, tries int, cb func(context.Context) error) error {
	if pause == nil {
		// Never read as "not paused": a host without a pause source could outlive its lease.
		return fmt.Errorf("%s failed: no pause source", action)
	}
	if pause.Paused() {
		return fmt.Errorf("%s failed: %w", action, pausedError{action})
	}

	tctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var final, last error
	giveUp := func() error {
		w.log.Error("maximum tries reached", "node", node, "rpc", action, "tries", tries)
		final = ErrMaxTries
		cancel()
		return final
	}
	err := w.policy.For(tctx, func(try int) error {
		if try > tries {
			return giveUp()
		}

		if pause.Paused() {
			final = pausedError{action}
			cancel()
			return final
		}

		obs := prometheus.NewTimer(w.time.WithLabelValues(w.site, action))
		defer obs.ObserveDuration()

		err := cb(tctx)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, ErrLocked), errors.Is(err, ErrPaused), errors.As(err, new(stopError)):
			// Another worker owns the node (retrying would only extend its lock fight), the
			// transport found the host paused or its lease unable to cover the request, or the
			// attempt refused its own input.
			if errors.Is(err, ErrFenced) {
				w.log.Warn("rpc attempt not sent", "node", node, "rpc", action, "try", try, "error", err)
			}
			final = err
			cancel()
			return err
		default:
			w.log.Warn("rpc attempt failed", "node", node, "rpc", action, "try", try, "error", err)
			last = err
			if try >= tries {
				// choria-provisioner notices the limit only at the next call, after one more
				// backoff sleep (up to 5s) that holds the worker for nothing; give up now.
				giveUp()
			}
			return err
		}
	})
	if err == nil {
		return nil
	}

	w.errors.WithLabelValues(w.site, action).Inc()
	switch {
	case errors.Is(final, ErrMaxTries) && last != nil:
		err = fmt.Errorf("%w (last attempt: %w)", final, last)
	case final != nil:
		err = final
	case last != nil:
		err = fmt.Errorf("%w (last attempt: %w)", err, last)
	}
	return fmt.Errorf("%s failed: %w", action, err)
}
