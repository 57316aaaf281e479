// SPDX-License-Identifier: Apache-2.0

package edge_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/metrics"
	"github.com/seed96588659/muster/pkg/testkit"
)

// pausingSource is the standalone queue with a coordinator's pause flag the test sets: each
// flag sent on flags is handed to the edge, and acked once the edge's callback has returned.
// Its grants carry the flag too, as a coordinator's do: an answer to an acquire sent before a
// change may still carry the old flag, until the next answer.
type pausingSource struct {
	*reports
	clusterParts
	flags chan bool
	acked chan struct{}
	cur   atomic.Bool
}

func (s *pausingSource) Acquire(ctx context.Context, max int, wait time.Duration) (lease.Grant, error) {
	g, err := s.reports.Acquire(ctx, max, wait)
	g.Paused = s.cur.Load()
	return g, err
}

func (s *pausingSource) WatchPause(ctx context.Context, changed func(paused bool, at api.PauseMark)) {
	for {
		select {
		case p := <-s.flags:
			s.cur.Store(p)
			changed(p, api.PauseMark{})
			s.acked <- struct{}{}
		case <-ctx.Done():
			return
		}
	}
}

func (s *pausingSource) setPaused(t *testing.T, p bool) {
	t.Helper()
	select {
	case s.flags <- p:
	case <-time.After(10 * time.Second):
		t.Fatal("the edge does not watch the pause flag")
	}
	<-s.acked
}

// pausedGauge reads choria_provisioner_paused for site.
func pausedGauge(t *testing.T, reg *metrics.Registry, site string) float64 {
	t.Helper()
	return metricValue(t, reg, "choria_provisioner_paused", site)
}

// metricValue reads the gauge or counter name of site.
func metricValue(t *testing.T, reg *metrics.Registry, name, site string) float64 {
	t.Helper()
	families, err := reg.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "site" && l.GetValue() == site {
					if c := m.GetCounter(); c != nil {
						return c.GetValue()
					}
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("no %s for site %s", name, site)
	return 0
}

// An edge halted by its broken journal stays halted, and says so, whatever pause is lifted:
// neither the operator's resume nor the coordinator's clears the paused gauge.
func TestEdge_BrokenJournalKeepsThePausedGaugeThroughResumes(t *testing.T) {
	fl, started := needsJournal()
	src := &pausingSource{reports: newReports(), flags: make(chan bool), acked: make(chan struct{})}
	reg := metrics.New()
	e, _ := run(t, edge.Options{Site: "s", Workers: 1, BatchSize: 1, Interval: time.Hour, Flow: fl,
		Finder: &finder{ids: []string{"a", "b", "c"}}, Mode: edge.Cluster(src), Journal: failingJournal{}, Metrics: reg})
	started.waitFirstReported(t, src.reports)
	if e.Ready() {
		t.Fatal("an edge whose journal failed still reads ready")
	}
	if got := pausedGauge(t, reg, "s"); got != 1 {
		t.Fatalf("paused gauge %v with a broken journal, want 1", got)
	}

	e.Pause()
	e.Resume()
	if got := pausedGauge(t, reg, "s"); got != 1 {
		t.Errorf("paused gauge %v after the operator's resume of a halted edge, want 1", got)
	}

	src.setPaused(t, true)
	src.setPaused(t, false)
	if got := pausedGauge(t, reg, "s"); got != 1 {
		t.Errorf("paused gauge %v after the coordinator's resume of a halted edge, want 1", got)
	}
	if n := started.count(); n != 1 {
		t.Errorf("%d hosts started, want only the first: resumes must not restart a halted edge", n)
	}
}

// Without a broken journal the gauge follows both pauses: 1 while either holds, 0 once both
// are lifted.
func TestEdge_PausedGaugeFollowsBothPauses(t *testing.T) {
	src := &pausingSource{reports: newReports(), flags: make(chan bool), acked: make(chan struct{})}
	reg := metrics.New()
	e, _ := run(t, edge.Options{Site: "s", Workers: 1, Interval: time.Hour, Flow: newFlow(provisioned),
		Finder: &finder{}, Mode: edge.Cluster(src), Metrics: reg})
	testkit.WaitFor(t, 10*time.Second, "the edge running", e.Ready)
	steps := []struct {
		what string
		do   func()
		want float64
	}{
		{"operator pause", e.Pause, 1},
		{"coordinator pause", func() { src.setPaused(t, true) }, 1},
		{"operator resume under the coordinator's pause", e.Resume, 1},
		{"coordinator resume", func() { src.setPaused(t, false) }, 0},
		{"coordinator pause again", func() { src.setPaused(t, true) }, 1},
		{"operator pause under it", e.Pause, 1},
		{"coordinator resume under the operator's pause", func() { src.setPaused(t, false) }, 1},
		{"operator resume", e.Resume, 0},
	}
	for _, s := range steps {
		s.do()
		// An acquire answered before a change of the coordinator's flag may flip it back until
		// the next answer (the dispatch loop's long poll): the gauge settles, it is not instant.
		testkit.WaitFor(t, 10*time.Second, "the paused gauge after "+s.what, func() (bool, string) {
			got := pausedGauge(t, reg, "s")
			return got == s.want, fmt.Sprintf("paused gauge %v, want %v", got, s.want)
		})
	}
}
