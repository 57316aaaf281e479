// SPDX-License-Identifier: Apache-2.0

package edge_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/edge/register"
	"github.com/seed96588659/muster/pkg/metrics"
	"github.com/seed96588659/muster/pkg/testkit"
)

// newNodesCount reads muster_edge_new_nodes_total for result; 0 when the edge has no such metric.
func newNodesCount(t *testing.T, reg *metrics.Registry, result string) float64 {
	t.Helper()
	families, err := reg.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "muster_edge_new_nodes_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// registered records every identity registered with its Local source, and the order its
// grants hand nodes out in.
type registered struct {
	*lease.Local
	mu      sync.Mutex
	ids     map[string]int
	granted []string
}

func newRegistered() *registered {
	return &registered{Local: lease.NewLocal(lease.LocalOptions{Edge: "e", Region: "r"}), ids: map[string]int{}}
}

func (r *registered) Register(ctx context.Context, found []register.Found) (int, error) {
	r.mu.Lock()
	for _, f := range found {
		r.ids[f.Identity]++
	}
	r.mu.Unlock()
	return r.Local.Register(ctx, found)
}

func (r *registered) Acquire(ctx context.Context, max int, wait time.Duration) (lease.Grant, error) {
	g, err := r.Local.Acquire(ctx, max, wait)
	if g.Lease != nil {
		r.mu.Lock()
		r.granted = append(r.granted, g.Lease.Nodes...)
		r.mu.Unlock()
	}
	return g, err
}

// registrations is how many times id was registered.
func (r *registered) registrations(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ids[id]
}

func (r *registered) count(prefix string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for id := range r.ids {
		if strings.HasPrefix(id, prefix) {
			n++
		}
	}
	return n
}

func (r *registered) grants() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.granted...)
}

// TestEdge_OneSweepTakesInABoundedNumberOfNewIdentities: a sweep answered for 20,000 identities
// the edge has not seen registers NewPerSweep (10,000 by default) of them; the rest are counted
// and wait for a later sweep.
func TestEdge_OneSweepTakesInABoundedNumberOfNewIdentities(t *testing.T) {
	f := &finder{ids: ids(20_000)}
	src := newRegistered()
	reg := metrics.New()
	// No flow ends: every registered node stays waiting or leased, so none is registered twice.
	block := newFlow(func(ctx context.Context, _ hostflow.Host) hostflow.Result {
		<-ctx.Done()
		return hostflow.Result{Outcome: hostflow.Paused, Err: ctx.Err()}
	})
	run(t, edge.Options{Site: "s", Workers: 1, Interval: time.Hour, Flow: block, Finder: f, Mode: edge.Standalone(src), Metrics: reg, DrainGrace: 10 * time.Millisecond})
	testkit.WaitFor(t, 30*time.Second, "10,000 new identities counted over the sweep's bound", func() (bool, string) {
		n := newNodesCount(t, reg, "sweep_limit")
		return n == 10_000, fmt.Sprintf("%v counted, %d registered", n, src.count("n-"))
	})
	testkit.WaitFor(t, 30*time.Second, "the 10,000 admitted registered", func() (bool, string) {
		return src.count("n-") >= 10_000, fmt.Sprintf("%d registered", src.count("n-"))
	})
	if got := src.count("n-"); got != 10_000 {
		t.Fatalf("%d identities registered from one sweep, want 10,000", got)
	}
}

// TestEdge_StartupEventsOfNewIdentitiesAreRateLimited: startup events for 12,000 identities the
// edge has not seen, announced while its clock stands still, register the burst of 10,000 and
// count the rest as over the edge's rate.
func TestEdge_StartupEventsOfNewIdentitiesAreRateLimited(t *testing.T) {
	t0 := time.Now()
	f := &eventFinder{}
	src := newRegistered()
	reg := metrics.New()
	block := newFlow(func(ctx context.Context, _ hostflow.Host) hostflow.Result {
		<-ctx.Done()
		return hostflow.Result{Outcome: hostflow.Paused, Err: ctx.Err()}
	})
	run(t, edge.Options{Site: "s", Workers: 1, Interval: time.Hour, Flow: block, Finder: f, Mode: edge.Standalone(src), Metrics: reg,
		Now: func() time.Time { return t0 }, DrainGrace: 10 * time.Millisecond})
	testkit.WaitFor(t, 10*time.Second, "the listener in place", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.event != nil
	})
	for i := range 12_000 {
		f.announce(fmt.Sprintf("ev-%05d", i))
	}
	testkit.WaitFor(t, 30*time.Second, "2,000 events counted over the rate", func() (bool, string) {
		n := newNodesCount(t, reg, "rate_limit")
		return n == 2_000, fmt.Sprintf("%v counted, %d registered", n, src.count("ev-"))
	})
	testkit.WaitFor(t, 30*time.Second, "the burst registered", func() (bool, string) {
		return src.count("ev-") >= 10_000, fmt.Sprintf("%d registered", src.count("ev-"))
	})
	if got := src.count("ev-"); got != 10_000 {
		t.Fatalf("%d identities registered from startup events at one instant, want the burst of 10,000", got)
	}
}

// TestEdge_IdentitiesThatDoNotAnswerTheirCheckAreNeverRegistered: a sweep names 200 invented
// identities and one real node; only the real node answers its check, and it alone is
// registered and provisioned. The invented ones are counted and logged once, not one line each.
func TestEdge_IdentitiesThatDoNotAnswerTheirCheckAreNeverRegistered(t *testing.T) {
	invented := make([]string, 200)
	for i := range invented {
		invented[i] = fmt.Sprintf("fake-%03d", i)
	}
	f := &finder{ids: append(invented, "real")}
	src := newRegistered()
	reg := metrics.New()
	logs := &testkit.LogBuffer{}
	var checks sync.Map
	check := func(_ context.Context, id string) (bool, error) {
		n, _ := checks.LoadOrStore(id, new(int))
		*n.(*int)++
		return id == "real", nil
	}
	fl := newFlow(provisioned)
	run(t, edge.Options{Site: "s", Workers: 4, Interval: 50 * time.Millisecond, Flow: fl, Finder: f, Mode: edge.Standalone(src), Metrics: reg,
		Check: check, Logger: logs.Logger(slog.LevelInfo)})
	testkit.WaitFor(t, 30*time.Second, "the real node provisioned", func() bool { return fl.count("real") > 0 })
	testkit.WaitFor(t, 30*time.Second, "a sweep's invented identities counted", func() bool {
		return newNodesCount(t, reg, "unanswered") >= 200
	})
	if n := src.count("fake-"); n > 0 {
		t.Fatalf("%d invented identities registered", n)
	}
	for _, id := range invented {
		if fl.count(id) > 0 {
			t.Fatalf("%s got a host flow", id)
		}
	}
	if !strings.Contains(logs.String(), "new nodes did not answer their check") || strings.Contains(logs.String(), "fake-001") {
		t.Fatalf("want one summary line per sweep naming no invented identity:\n%s", logs.Tail(2000))
	}
}

// TestEdge_KnownNodesAreServedBeforeFirstSeenOnes: a node the edge knows (it failed, and is
// found again) is leased before identities first seen in the same sweep, whatever their names.
func TestEdge_KnownNodesAreServedBeforeFirstSeenOnes(t *testing.T) {
	f := &eventFinder{ids: []string{"z-known"}}
	src := newRegistered()
	var once sync.Once
	failedOnce := make(chan struct{})
	fl := newFlow(func(_ context.Context, h hostflow.Host) hostflow.Result {
		if h.Identity == "z-known" {
			ok := false
			once.Do(func() { ok = true; close(failedOnce) })
			if ok {
				return hostflow.Result{Outcome: hostflow.Failed, Err: fmt.Errorf("first try fails")}
			}
		}
		return hostflow.Result{Outcome: hostflow.Provisioned}
	})
	// New nodes wait for their check, which answers here once the known node is registered
	// again: the edge registers in concurrent calls, and without a check (as in production) the
	// two could reach the source in either order.
	check := func(ctx context.Context, id string) (bool, error) {
		deadline := time.Now().Add(10 * time.Second)
		for strings.HasPrefix(id, "a-new") && src.registrations("z-known") < 2 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond) // polling interval
		}
		return true, nil
	}
	e, _ := run(t, edge.Options{Site: "s", Workers: 1, BatchSize: 1, Interval: time.Hour, Flow: fl, Finder: f, Mode: edge.Standalone(src), Check: check})
	<-failedOnce
	testkit.WaitFor(t, 10*time.Second, "z-known given back", func() bool { return src.Counts().Leased == 0 })
	f.mu.Lock()
	f.ids = []string{"a-new-1", "a-new-2", "a-new-3", "z-known"}
	f.mu.Unlock()
	e.Resume() // sweeps at once
	testkit.WaitFor(t, 30*time.Second, "every node granted", func() bool { return len(src.grants()) >= 5 })
	if got := src.grants(); got[1] != "z-known" {
		t.Fatalf("granted in order %v: the known node after first-seen ones", got)
	}
}

// count is how many flows ran for id.
func (f *flow) count(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.runs[id]
}

// orderedSource records the order identities are registered in.
type orderedSource struct {
	*lease.Local
	mu  sync.Mutex
	ids []string
}

func (o *orderedSource) Register(ctx context.Context, found []register.Found) (int, error) {
	o.mu.Lock()
	for _, f := range found {
		o.ids = append(o.ids, f.Identity)
	}
	o.mu.Unlock()
	return o.Local.Register(ctx, found)
}

// TestEdge_CheckedIdentitiesAreRegisteredInIdentityOrder: the new identities of a sweep answer
// their checks in any order, and are registered in identity order all the same (the ledger keys
// its nodes so, and a lease of neighbours touches few of its pages).
func TestEdge_CheckedIdentitiesAreRegisteredInIdentityOrder(t *testing.T) {
	fleet := ids(50)
	f := &finder{ids: fleet}
	src := &orderedSource{Local: lease.NewLocal(lease.LocalOptions{Edge: "e", Region: "r"})}
	check := func(ctx context.Context, id string) (bool, error) {
		var n int
		fmt.Sscanf(id, "n-%d", &n)
		select { // later names answer first
		case <-time.After(time.Duration(50-n) * 2 * time.Millisecond):
		case <-ctx.Done():
		}
		return true, nil
	}
	// The round waits for its slowest here: on a loaded machine 100 ms may take longer.
	run(t, edge.Options{Site: "s", Workers: 1, Interval: time.Hour, Flow: newFlow(provisioned), Finder: f, Mode: edge.Standalone(src), Check: check, CheckRound: time.Minute})
	testkit.WaitFor(t, 10*time.Second, "every node registered", func() bool {
		src.mu.Lock()
		defer src.mu.Unlock()
		return len(src.ids) >= len(fleet)
	})
	src.mu.Lock()
	defer src.mu.Unlock()
	for i, id := range src.ids[:len(fleet)] {
		if id != fleet[i] {
			t.Fatalf("registered in order %v", src.ids)
		}
	}
}

// An identity that never answers its check holds the others of its round for CheckRound, not
// for as long as its check lasts: they are registered while it still waits.
func TestEdge_ACheckThatNeverAnswersDoesNotHoldItsRound(t *testing.T) {
	fleet := []string{"n-00", "n-01", "silent", "n-02"}
	src := &orderedSource{Local: lease.NewLocal(lease.LocalOptions{Edge: "e", Region: "r"})}
	check := func(ctx context.Context, id string) (bool, error) {
		if id == "silent" {
			<-ctx.Done() // a check timeout longer than the test
			return false, nil
		}
		return true, nil
	}
	run(t, edge.Options{Site: "s", Workers: 1, Interval: time.Hour, Flow: newFlow(provisioned), Finder: &finder{ids: fleet}, Mode: edge.Standalone(src), Check: check, CheckRound: 50 * time.Millisecond})
	testkit.WaitFor(t, 30*time.Second, "the three that answered registered while the silent one's check waits", func() bool {
		src.mu.Lock()
		defer src.mu.Unlock()
		return len(src.ids) >= 3
	})
	src.mu.Lock()
	defer src.mu.Unlock()
	if want := []string{"n-00", "n-01", "n-02"}; !slices.Equal(src.ids[:3], want) {
		t.Fatalf("registered %v, want %v in order", src.ids, want)
	}
}
