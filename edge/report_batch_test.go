// SPDX-License-Identifier: Apache-2.0

package edge_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// countingSource records every grant's nodes and every report's results by lease.
type countingSource struct {
	*lease.Local
	mu      sync.Mutex
	granted map[string]int   // lease id -> nodes
	reports map[string][]int // lease id -> results of each report
}

func (s *countingSource) Acquire(ctx context.Context, max int, wait time.Duration) (lease.Grant, error) {
	g, err := s.Local.Acquire(ctx, max, wait)
	if g.Lease != nil {
		s.mu.Lock()
		s.granted[g.Lease.ID] = len(g.Lease.Nodes)
		s.mu.Unlock()
	}
	return g, err
}

func (s *countingSource) Report(ctx context.Context, l api.Lease, results []api.NodeResult) (api.ReportResponse, error) {
	s.mu.Lock()
	s.reports[l.ID] = append(s.reports[l.ID], len(results))
	s.mu.Unlock()
	return s.Local.Report(ctx, l, results)
}

// A lease whose hosts finish one after another within the report delay is reported once, at its
// last result, not in a report for every few results: each report is a Raft entry on every member.
func TestEdge_ALeaseFinishedWithinTheReportDelayIsReportedOnce(t *testing.T) {
	src := &countingSource{Local: lease.NewLocal(lease.LocalOptions{Edge: "e", Region: "r"}), granted: map[string]int{}, reports: map[string][]int{}}
	fleet := ids(48)
	fl := newFlow(func(ctx context.Context, h hostflow.Host) hostflow.Result {
		time.Sleep(5 * time.Millisecond) // hosts end apart, as real ones do
		return hostflow.Result{Outcome: hostflow.Provisioned}
	})
	// The edge's clock stands still, so however slow the machine no batch grows old enough to go
	// before its lease's last result.
	still := time.Now()
	e, stop := run(t, edge.Options{Site: "s", Workers: 4, BatchSize: 8, Interval: time.Hour, Flow: fl, Finder: &finder{ids: fleet}, Mode: edge.Standalone(src),
		Now: func() time.Time { return still }})
	testkit.WaitFor(t, time.Minute, "every node provisioned", func() bool {
		return e.Stats().Outcomes[hostflow.Provisioned] == int64(len(fleet))
	})
	stop()
	src.mu.Lock()
	defer src.mu.Unlock()
	for id, n := range src.granted {
		if got := src.reports[id]; len(got) != 1 || got[0] != n {
			t.Errorf("lease %s of %d nodes was reported as %v, want one report of %d", id, n, got, n)
		}
	}
}

// A result does not wait for the rest of its lease longer than the report delay: a host that
// runs for minutes must not hold its lease-mates' results.
func TestEdge_AResultWaitsForItsLeaseMatesNoLongerThanTheReportDelay(t *testing.T) {
	src := &countingSource{Local: lease.NewLocal(lease.LocalOptions{Edge: "e", Region: "r"}), granted: map[string]int{}, reports: map[string][]int{}}
	fleet := ids(2)
	release := make(chan struct{})
	fl := newFlow(func(ctx context.Context, h hostflow.Host) hostflow.Result {
		if h.Identity == fleet[1] {
			<-release
		}
		return hostflow.Result{Outcome: hostflow.Provisioned}
	})
	e, stop := run(t, edge.Options{Site: "s", Workers: 2, BatchSize: 2, Interval: time.Hour, Flow: fl, Finder: &finder{ids: fleet}, Mode: edge.Standalone(src)})
	defer stop()
	defer close(release)
	testkit.WaitFor(t, time.Minute, "the finished host's result reported while its lease-mate runs", func() bool {
		src.mu.Lock()
		defer src.mu.Unlock()
		for id, r := range src.reports {
			if len(r) == 1 && r[0] == 1 && src.granted[id] == 2 {
				return true
			}
		}
		return false
	})
	if got := e.Stats().Outcomes[hostflow.Provisioned]; got != 1 {
		t.Fatalf("%d provisioned while one host still runs, want 1", got)
	}
}
