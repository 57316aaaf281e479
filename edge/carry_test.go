// SPDX-License-Identifier: Apache-2.0

package edge_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// carrierSource is a local source whose acquires carry deliveries; it records under which
// request id each node's result arrived, carried or alone, and fails the first failCarried
// acquires that carry any (before applying them, as a lost call would).
type carrierSource struct {
	*lease.Local
	clusterParts
	mu          sync.Mutex
	failCarried int
	carried     map[string]string // node -> request id it was carried under
	alone       map[string]string // node -> request id it was delivered alone under
	failedIDs   []string          // request ids of the deliveries failed acquires carried
}

var _ lease.Carrier = (*carrierSource)(nil)

func (s *carrierSource) Carries() bool { return true }

func (s *carrierSource) AcquireCarrying(ctx context.Context, max int, wait time.Duration, ds []lease.Delivery) (lease.Grant, []lease.Delivered, error) {
	s.mu.Lock()
	if s.failCarried > 0 {
		s.failCarried--
		for _, d := range ds {
			s.failedIDs = append(s.failedIDs, d.RequestID)
		}
		s.mu.Unlock()
		return lease.Grant{}, nil, errors.New("leader lost")
	}
	s.mu.Unlock()
	answers := make([]lease.Delivered, len(ds))
	for i, d := range ds {
		resp, err := s.record(s.carried, d)
		answers[i] = lease.Delivered{Answered: true, Response: resp, Err: err}
	}
	g, err := s.Local.Acquire(ctx, max, wait)
	return g, answers, err
}

func (s *carrierSource) Deliver(ctx context.Context, d lease.Delivery) (api.ReportResponse, error) {
	return s.record(s.alone, d)
}

func (s *carrierSource) record(into map[string]string, d lease.Delivery) (api.ReportResponse, error) {
	s.mu.Lock()
	for _, r := range d.Results {
		into[r.Identity] = d.RequestID
	}
	s.mu.Unlock()
	return s.Local.Report(context.Background(), d.Lease, d.Results)
}

func newCarrierSource(failCarried int) *carrierSource {
	return &carrierSource{Local: lease.NewLocal(lease.LocalOptions{Edge: "e", Region: "r"}), failCarried: failCarried, carried: map[string]string{}, alone: map[string]string{}}
}

// provisionAll runs an edge on fleet against src until every node's result was delivered.
func provisionAll(t *testing.T, src *carrierSource, fleet []string) (*edge.Edge, func()) {
	t.Helper()
	fl := newFlow(func(ctx context.Context, h hostflow.Host) hostflow.Result {
		return hostflow.Result{Outcome: hostflow.Provisioned}
	})
	e, stop := run(t, edge.Options{Site: "s", Workers: 2, BatchSize: 2, Interval: time.Hour, Flow: fl, Finder: &finder{ids: fleet}, Mode: edge.Cluster(src)})
	testkit.WaitFor(t, time.Minute, "every result delivered", func() bool {
		src.mu.Lock()
		defer src.mu.Unlock()
		return len(src.carried)+len(src.alone) == len(fleet)
	})
	return e, stop
}

// A finished lease's results ride the next acquire; every node's result arrives once, and the
// leases no acquire took in time go alone.
func TestEdge_FinishedLeasesRideTheNextAcquire(t *testing.T) {
	src := newCarrierSource(0)
	fleet := ids(40)
	e, stop := provisionAll(t, src, fleet)
	stop()
	src.mu.Lock()
	defer src.mu.Unlock()
	for id := range src.carried {
		if _, twice := src.alone[id]; twice {
			t.Errorf("%s was delivered carried and alone", id)
		}
	}
	if len(src.carried) == 0 {
		t.Fatalf("no result rode an acquire (%d alone)", len(src.alone))
	}
	if got := e.Stats().Outcomes[hostflow.Provisioned]; got != int64(len(fleet)) {
		t.Fatalf("%d provisioned, want %d", got, len(fleet))
	}
}

// The results a failed acquire carried are sent alone under the request ids they were carried
// under, so a source that applied them before the answer was lost applies them once.
func TestEdge_ResultsOfAFailedAcquireGoAloneUnderTheirRequestIDs(t *testing.T) {
	src := newCarrierSource(1)
	_, stop := provisionAll(t, src, ids(40))
	defer stop()
	src.mu.Lock()
	defer src.mu.Unlock()
	if len(src.failedIDs) == 0 {
		t.Fatal("no acquire carried anything")
	}
	alone := map[string]bool{}
	for _, rid := range src.alone {
		alone[rid] = true
	}
	for _, rid := range src.failedIDs {
		if !alone[rid] {
			t.Errorf("request %s carried by the failed acquire was not delivered alone under its id (alone: %v)", rid, src.alone)
		}
	}
}
