// SPDX-License-Identifier: Apache-2.0

package edge_test

import (
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/metrics"
)

// TestNew_RefusesOptionsNamingTheField: the defaults are a value a caller starts from; what it
// then sets wrong is refused with the field's name, never silently replaced by a default.
func TestNew_RefusesOptionsNamingTheField(t *testing.T) {
	valid := func() edge.Options {
		o := edge.DefaultOptions()
		o.Flow, o.Finder, o.Metrics = newFlow(provisioned), &finder{}, metrics.New()
		o.Mode = edge.Standalone(lease.NewLocal(lease.LocalOptions{Edge: "e", Region: "r"}))
		return o
	}
	if _, err := edge.New(valid()); err != nil {
		t.Fatalf("DefaultOptions with the required parts: %v", err)
	}
	for _, c := range []struct {
		edit func(*edge.Options)
		want string
	}{
		{func(o *edge.Options) { o.Flow = nil }, "host flow is required"},
		{func(o *edge.Options) { o.Mode = edge.Mode{} }, "lease source is required"},
		{func(o *edge.Options) { o.Workers = 0 }, "Workers is 0"},
		{func(o *edge.Options) { o.BatchSize = -1 }, "BatchSize is -1"},
		{func(o *edge.Options) { o.Interval = 0 }, "Interval is 0s"},
		{func(o *edge.Options) { o.DrainGrace = -time.Second }, "DrainGrace is -1s"},
		{func(o *edge.Options) { o.LifecycleComponent = "" }, "LifecycleComponent is empty"},
		{func(o *edge.Options) { o.Logger = nil }, "Logger is nil"},
		{func(o *edge.Options) { o.Now = nil }, "Now and Wall"},
	} {
		o := valid()
		c.edit(&o)
		if _, err := edge.New(o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", err, c.want)
		}
	}
	if err := (edge.Options{}).Validate(); err == nil {
		t.Error("zero Options validate; want the required parts named")
	}
}
