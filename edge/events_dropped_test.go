// SPDX-License-Identifier: Apache-2.0

package edge_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/discovery"
	"github.com/seed96588659/muster/pkg/metrics"
	"github.com/seed96588659/muster/pkg/testkit"
)

// droppingFinder is a finder whose Listen hands the test its bad callback.
type droppingFinder struct {
	finder
	mu  sync.Mutex
	bad func(error)
}

func (f *droppingFinder) Listen(_ context.Context, _ string, _ func(string), bad func(error)) error {
	f.mu.Lock()
	f.bad = bad
	f.mu.Unlock()
	return nil
}

// droppedCount reads muster_edge_startup_events_dropped_total for reason.
func droppedCount(reg *metrics.Registry, reason string) (float64, error) {
	families, err := reg.Gatherer().Gather()
	if err != nil {
		return 0, err
	}
	for _, f := range families {
		if f.GetName() != "muster_edge_startup_events_dropped_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == reason {
					return m.GetCounter().GetValue(), nil
				}
			}
		}
	}
	return 0, fmt.Errorf("no muster_edge_startup_events_dropped_total{reason=%q}", reason)
}

// TestEdge_DroppedStartupEventsAreCountedAndSweptFor: startup events the listener dropped unread
// are counted by reason, and a sweep follows soon (not only at the next interval) to find their
// nodes, which are still in provisioning mode.
func TestEdge_DroppedStartupEventsAreCountedAndSweptFor(t *testing.T) {
	f := &droppingFinder{finder: finder{ids: []string{"a"}}}
	reg := metrics.New()
	run(t, edge.Options{Site: "s", Workers: 1, Interval: time.Hour, RegisterFresh: 200 * time.Millisecond, Flow: newFlow(provisioned), Finder: f, Metrics: reg})
	testkit.WaitFor(t, 10*time.Second, "the first sweep", func() bool { return f.sweeps.Load() >= 1 })
	f.mu.Lock()
	bad := f.bad
	f.mu.Unlock()
	bad(&discovery.DroppedError{Reason: discovery.DropOverflow, Count: 1500})
	bad(&discovery.DroppedError{Reason: discovery.DropOversized, Count: 1})
	testkit.WaitFor(t, 10*time.Second, "a sweep after the drops, within the hour's interval", func() (bool, string) {
		return f.sweeps.Load() >= 2, fmt.Sprintf("%d sweeps", f.sweeps.Load())
	})
	for reason, want := range map[string]float64{discovery.DropOverflow: 1500, discovery.DropOversized: 1} {
		if got, err := droppedCount(reg, reason); err != nil || got != want {
			t.Errorf("dropped %s: %v %v, want %v", reason, got, err, want)
		}
	}
}
