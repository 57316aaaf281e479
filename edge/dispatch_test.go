// SPDX-License-Identifier: Apache-2.0

package edge_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/metrics"
	"github.com/seed96588659/muster/pkg/testkit"
)

// forging is a local source whose first acquire answers with a lease it never granted, in a
// shape the edge did not ask for; every later acquire is the local source's own.
type forging struct {
	*lease.Local
	forged func(max int) api.Lease
	sent   atomic.Bool
}

func (s *forging) Acquire(ctx context.Context, max int, wait time.Duration) (lease.Grant, error) {
	if s.sent.CompareAndSwap(false, true) {
		l := s.forged(max)
		return lease.Grant{Lease: &l}, nil
	}
	return s.Local.Acquire(ctx, max, wait)
}

// A lease of more nodes than the edge asked for, or listing a node twice, is refused: none of
// its nodes is run, the edge's places for leased hosts are all given back (it goes on leasing
// and stops cleanly), and the refusal is logged naming what was wrong.
func TestEdge_RefusesALeaseOfAnotherShapeThanAsked(t *testing.T) {
	for _, tc := range []struct {
		name   string
		forged func(max int) api.Lease
		want   string
	}{
		{"more nodes than asked", func(max int) api.Lease {
			l := api.Lease{ID: "forged", Token: 1}
			for i := range max + 3 {
				l.Nodes = append(l.Nodes, "x"+string(rune('0'+i)))
			}
			return l
		}, "but this edge asked for at most"},
		{"a node listed twice", func(int) api.Lease {
			return api.Lease{ID: "forged", Token: 1, Nodes: []string{"a", "a"}}
		}, "lists a twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &forging{Local: lease.NewLocal(lease.LocalOptions{}), forged: tc.forged}
			fl := newFlow(provisioned)
			logs := &testkit.LogBuffer{}
			reg := metrics.New()
			e, stop := run(t, edge.Options{Site: "s", Workers: 1, Interval: time.Hour, Flow: fl, Mode: edge.Standalone(src), Finder: &finder{ids: []string{"a", "b"}},
				Logger: slog.New(slog.NewTextHandler(logs, nil)), Metrics: reg})
			testkit.WaitFor(t, 10*time.Second, "a and b provisioned", func() bool { return e.Stats().Outcomes[hostflow.Provisioned] == 2 })
			stop()
			if !src.sent.Load() {
				t.Fatal("the forged lease was never offered")
			}
			fl.mu.Lock()
			defer fl.mu.Unlock()
			if len(fl.overlap) > 0 || fl.runs["a"] != 1 || fl.runs["b"] != 1 || len(fl.runs) != 2 {
				t.Fatalf("runs %v, overlapping %v: want a and b once each, nothing of the forged lease", fl.runs, fl.overlap)
			}
			if out := logs.String(); !strings.Contains(out, "forged") || !strings.Contains(out, tc.want) {
				t.Errorf("no log line names the refused lease and %q:\n%s", tc.want, out)
			}
			if v := metricValue(t, reg, "muster_edge_leases_refused_total", "s"); v < 1 {
				t.Errorf("muster_edge_leases_refused_total %v, want the refused lease counted", v)
			}
		})
	}
}

// renewing is a local source whose leases expire and whose renewals wait for the call's end,
// as one sent to a coordinator that went silent does; it hands on each renewal's context.
type renewing struct {
	*lease.Local
	ttl     time.Duration
	renewed chan context.Context
}

func (s renewing) Acquire(ctx context.Context, max int, wait time.Duration) (lease.Grant, error) {
	g, err := s.Local.Acquire(ctx, max, wait)
	if g.Lease != nil {
		g.Lease.TTL = api.Duration(s.ttl)
	}
	return g, err
}

func (s renewing) Renew(ctx context.Context, _ api.Lease) (lease.Grant, error) {
	select {
	case s.renewed <- ctx:
	default:
	}
	<-ctx.Done()
	return lease.Grant{}, ctx.Err()
}

// A renewal is bounded by the lease's own deadline on the edge's clock: after it the lease is
// lost whatever the answer, so a renewal stuck on a silent member is not waited on past it.
func TestEdge_RenewalEndsAtTheLeasesDeadline(t *testing.T) {
	const ttl, margin = 900 * time.Millisecond, 100 * time.Millisecond
	src := renewing{Local: lease.NewLocal(lease.LocalOptions{}), ttl: ttl, renewed: make(chan context.Context, 1)}
	fl := newFlow(func(ctx context.Context, h hostflow.Host) hostflow.Result {
		for !h.Pause.Paused() {
			select {
			case <-ctx.Done():
				return hostflow.Result{Outcome: hostflow.Paused, Err: ctx.Err()}
			case <-time.After(10 * time.Millisecond):
			}
		}
		return hostflow.Result{Outcome: hostflow.Paused, Err: errors.New("paused")}
	})
	started := time.Now()
	run(t, edge.Options{Workers: 1, Interval: time.Hour, LeaseMargin: margin, Flow: fl, Mode: edge.Standalone(src), Finder: &finder{ids: []string{"a"}}})
	var ctx context.Context
	select {
	case ctx = <-src.renewed:
	case <-time.After(10 * time.Second):
		t.Fatal("the lease was never renewed")
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		t.Fatal("the renewal has no deadline: a silent coordinator holds it past the lease's end")
	}
	// The lease was acquired after started, so its deadline on the edge's clock is before
	// (acquire answered) + ttl - margin, and the renewal's must be too.
	if latest := time.Now().Add(ttl - margin); deadline.After(latest) {
		t.Fatalf("the renewal may run until %s, past the lease's deadline (at the latest %s)", deadline.Sub(started), latest.Sub(started))
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the renewal was not ended at the lease's deadline")
	}
}
