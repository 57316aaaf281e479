// SPDX-License-Identifier: Apache-2.0

package labkit

import (
	"context"
	"sync"
	"time"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/api"
)

// Calls are the timings of edges' grants and reports, for the cluster benchmarks; safe for
// several edges at once.
type Calls struct {
	mu      sync.Mutex
	grants  []time.Duration
	reports []time.Duration
	granted []grantTimes
}

// grantTimes are when a granted acquire was sent and when its answer came.
type grantTimes struct{ sent, got time.Time }

// Timed makes an edge's coordinator source record into c (an edge.Options tune); a standalone
// edge has no coordinator source and records nothing. A grant's time is its acquire call less
// the time the leader held it waiting for nodes (a long poll); a report's is its whole call,
// retries included.
func (c *Calls) Timed(o *edge.Options) {
	if src, ok := o.Mode.Source().(*lease.Coordinator); ok {
		o.Mode = edge.Cluster(&timedSource{Coordinator: src, calls: c})
	}
}

// Grants are the grant times so far.
func (c *Calls) Grants() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.grants...)
}

// Reports are the report times so far.
func (c *Calls) Reports() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.reports...)
}

// FirstGrantSentAfter is when the first lease asked for after t reached its edge: the stall
// after a leader's kill at t, not an answer the killed leader had already sent; false if none.
func (c *Calls) FirstGrantSentAfter(t time.Time) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var first time.Time
	for _, g := range c.granted {
		if g.sent.After(t) && (first.IsZero() || g.got.Before(first)) {
			first = g.got
		}
	}
	return first, !first.IsZero()
}

// timedSource times a coordinator source's grants and reports, carried ones included; it stays
// a lease.ClusterSource.
type timedSource struct {
	*lease.Coordinator
	calls *Calls
}

func (s *timedSource) Acquire(ctx context.Context, max int, wait time.Duration) (lease.Grant, error) {
	g, _, err := s.AcquireCarrying(ctx, max, wait, nil)
	return g, err
}

// AcquireCarrying times the grant, and each report it carried and had answered by the call's
// whole time.
func (s *timedSource) AcquireCarrying(ctx context.Context, max int, wait time.Duration, ds []lease.Delivery) (lease.Grant, []lease.Delivered, error) {
	start := time.Now()
	g, answers, err := s.Coordinator.AcquireCarrying(ctx, max, wait, ds)
	now := time.Now()
	s.calls.mu.Lock()
	defer s.calls.mu.Unlock()
	if err == nil && g.Lease != nil {
		s.calls.grants = append(s.calls.grants, now.Sub(start)-g.Held)
		s.calls.granted = append(s.calls.granted, grantTimes{sent: start, got: now})
	}
	for _, a := range answers {
		if a.Answered && a.Err == nil {
			s.calls.reports = append(s.calls.reports, now.Sub(start))
		}
	}
	return g, answers, err
}

func (s *timedSource) Report(ctx context.Context, l api.Lease, results []api.NodeResult) (api.ReportResponse, error) {
	return s.Deliver(ctx, lease.NewDelivery(l, results))
}

func (s *timedSource) Deliver(ctx context.Context, d lease.Delivery) (api.ReportResponse, error) {
	start := time.Now()
	resp, err := s.Coordinator.Deliver(ctx, d)
	if err == nil {
		d := time.Since(start)
		s.calls.mu.Lock()
		s.calls.reports = append(s.calls.reports, d)
		s.calls.mu.Unlock()
	}
	return resp, err
}
