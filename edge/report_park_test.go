// SPDX-License-Identifier: Apache-2.0

package edge

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/metrics"
)

// parkSource is a local source whose acquires could carry reports; it counts the reports sent
// alone.
type parkSource struct {
	*lease.Local
	mu    sync.Mutex
	alone int
}

func (s *parkSource) Carries() bool { return true }

func (s *parkSource) Unsettled(...string) {}

func (s *parkSource) WatchPause(context.Context, func(bool, api.PauseMark)) {}

func (s *parkSource) AcquireCarrying(ctx context.Context, max int, wait time.Duration, ds []lease.Delivery) (lease.Grant, []lease.Delivered, error) {
	return lease.Grant{}, nil, nil
}

func (s *parkSource) Deliver(ctx context.Context, d lease.Delivery) (api.ReportResponse, error) {
	return s.Report(ctx, d.Lease, d.Results)
}

func (s *parkSource) Report(ctx context.Context, l api.Lease, rs []api.NodeResult) (api.ReportResponse, error) {
	s.mu.Lock()
	s.alone++
	s.mu.Unlock()
	return api.ReportResponse{}, nil
}

type noFinder struct{}

func (noFinder) Sweep(context.Context, ...string) ([]string, error) { return nil, nil }
func (noFinder) Listen(context.Context, string, func(string), func(error)) error {
	return nil
}

type noFlow struct{}

func (noFlow) Run(context.Context, hostflow.Host) hostflow.Result { return hostflow.Result{} }

// The first results of a lease whose hosts span more than lease.BatchFor are reported without
// waiting for the rest, and ride the next acquire as a finished lease's do: each lone report is
// one more log entry on every member. A replayed intent's results (a lease listing no nodes)
// still go alone.
func TestReporter_APartOfALeaseOlderThanTheReportDelayIsParkedForTheNextAcquire(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	src := &parkSource{Local: lease.NewLocal(lease.LocalOptions{Edge: "e", Region: "r"})}
	o := DefaultOptions()
	o.Flow, o.Mode, o.Finder, o.Metrics, o.Now, o.Wall = noFlow{}, Cluster(src), noFinder{}, metrics.New(), clock, clock
	e, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	box := e.newOutbox(context.Background())
	r := &reporter{box: box, now: clock, log: e.log, tally: e.tally, forget: e.forget}
	held := lease.NewHeld(api.Lease{ID: "l1", Token: 1, Nodes: []string{"a", "b"}}, now, 0, o.LeaseMargin)
	run := &leaseRun{stop: func() {}}
	r.add(leased{Result: hostflow.Result{Identity: "a", Outcome: hostflow.Provisioned}, lease: held, run: run})
	replayed := lease.NewHeld(api.Lease{ID: "l0", Token: 1}, now, 0, o.LeaseMargin)
	r.add(leased{Result: hostflow.Result{Identity: "z", Outcome: hostflow.Provisioned}, lease: replayed, replayed: true})

	mu.Lock()
	now = now.Add(lease.BatchFor + time.Millisecond)
	mu.Unlock()
	box.put(r.batches.Due(clock()))
	box.wait()

	parked := box.take()
	if len(parked) != 1 || parked[0].held != held || len(parked[0].results) != 1 || parked[0].results[0].Identity != "a" {
		t.Fatalf("parked %+v, want lease l1's result of a", parked)
	}
	box.carried(parked, []lease.Delivered{{Answered: true}}, nil)
	if src.alone != 1 {
		t.Fatalf("%d reports went alone, want only the replayed intent's", src.alone)
	}
	if r.batches.Len() != 0 {
		t.Fatalf("%d results pending after the flush", r.batches.Len())
	}
}
