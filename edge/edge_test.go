// SPDX-License-Identifier: Apache-2.0

package edge_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
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

// finder returns a fixed fleet on every sweep; present decides what targeted sweeps find.
type finder struct {
	ids     []string
	present func(id string) bool
	sweeps  atomic.Int64
}

func (f *finder) Sweep(_ context.Context, ids ...string) ([]string, error) {
	f.sweeps.Add(1)
	if len(ids) == 0 {
		return f.ids, nil
	}
	var out []string
	for _, id := range ids {
		if f.present != nil && f.present(id) {
			out = append(out, id)
		}
	}
	return out, nil
}

func (f *finder) Listen(context.Context, string, func(string), func(error)) error { return nil }

// flow counts runs per node and flags any node run twice at the same time.
type flow struct {
	run func(ctx context.Context, h hostflow.Host) hostflow.Result

	mu      sync.Mutex
	running map[string]bool
	runs    map[string]int
	overlap []string
}

func newFlow(run func(ctx context.Context, h hostflow.Host) hostflow.Result) *flow {
	return &flow{run: run, running: map[string]bool{}, runs: map[string]int{}}
}

func (f *flow) Run(ctx context.Context, h hostflow.Host) hostflow.Result {
	f.mu.Lock()
	if f.running[h.Identity] {
		f.overlap = append(f.overlap, h.Identity)
	}
	f.running[h.Identity] = true
	f.runs[h.Identity]++
	f.mu.Unlock()
	res := f.run(ctx, h)
	f.mu.Lock()
	delete(f.running, h.Identity)
	f.mu.Unlock()
	res.Identity = h.Identity
	return res
}

func provisioned(context.Context, hostflow.Host) hostflow.Result {
	return hostflow.Result{Outcome: hostflow.Provisioned}
}

func ids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("n-%05d", i)
	}
	return out
}

// tuned is edge.DefaultOptions() with every field o sets: a test states only what it tunes.
func tuned(o edge.Options) edge.Options {
	d := edge.DefaultOptions()
	set, out := reflect.ValueOf(o), reflect.ValueOf(&d).Elem()
	for i := range set.NumField() {
		if f := set.Field(i); !f.IsZero() {
			out.Field(i).Set(f)
		}
	}
	return d
}

// run starts an edge with the options o tunes; stop ends it and returns once Run returned (the
// test's cleanup calls it too).
func run(t *testing.T, o edge.Options) (e *edge.Edge, stop func()) {
	t.Helper()
	o = tuned(o)
	if o.Metrics == nil {
		o.Metrics = metrics.New()
	}
	if o.Mode.Source() == nil {
		o.Mode = edge.Standalone(lease.NewLocal(lease.LocalOptions{Edge: "e", Region: "r"}))
	}
	e, err := edge.New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Error("edge did not stop")
			}
		})
	}
	t.Cleanup(stop)
	return e, stop
}

// choria-provisioner's changelog items 167 and 190: a full work queue stalled provisioning, and
// nodes being provisioned were queued again. 50,000 waiting nodes, found again by every sweep
// while they wait, are each provisioned exactly once and never twice at a time.
func TestEdge_FiftyThousandWaitingNodesEachProvisionedOnce(t *testing.T) {
	fleet := ids(50000)
	f := &finder{ids: fleet}
	fl := newFlow(func(ctx context.Context, h hostflow.Host) hostflow.Result {
		return hostflow.Result{Outcome: hostflow.Provisioned}
	})
	// A region this large takes all of its nodes in at once: the operator sets the bounds on new
	// nodes to its largest boot storm.
	e, _ := run(t, edge.Options{Site: "s", Workers: 64, Interval: 20 * time.Millisecond, Flow: fl, Finder: f, NewPerSweep: len(fleet), NewBurst: len(fleet)})
	testkit.WaitFor(t, 2*time.Minute, "50,000 provisioned", func() bool {
		return e.Stats().Outcomes[hostflow.Provisioned] == int64(len(fleet))
	})
	if f.sweeps.Load() < 3 {
		t.Fatalf("only %d sweeps ran: the test did not rediscover waiting nodes", f.sweeps.Load())
	}
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if len(fl.overlap) > 0 {
		t.Fatalf("%d nodes ran twice at once, e.g. %s", len(fl.overlap), fl.overlap[0])
	}
	for _, id := range fleet {
		if fl.runs[id] != 1 {
			t.Fatalf("%s ran %d times", id, fl.runs[id])
		}
	}
}

// expiring is a lease source whose leases run out after ttl and are never renewed; reports,
// when set, keeps every result reported.
type expiring struct {
	*lease.Local
	ttl     time.Duration
	reports *reportLog
}

// reportLog is the results an edge reported, in order.
type reportLog struct {
	mu      sync.Mutex
	results []api.NodeResult
}

func (s expiring) Report(ctx context.Context, l api.Lease, results []api.NodeResult) (api.ReportResponse, error) {
	if s.reports != nil {
		s.reports.mu.Lock()
		s.reports.results = append(s.reports.results, results...)
		s.reports.mu.Unlock()
	}
	return s.Local.Report(ctx, l, results)
}

func (s expiring) Acquire(ctx context.Context, max int, wait time.Duration) (lease.Grant, error) {
	g, err := s.Local.Acquire(ctx, max, wait)
	if g.Lease != nil {
		g.Lease.TTL = api.Duration(s.ttl)
	}
	return g, err
}

func (s expiring) Renew(context.Context, api.Lease) (lease.Grant, error) {
	return lease.Grant{}, errors.New("coordinator unreachable")
}

// TestEdge_LostLeaseReadsAsPaused: a host whose lease ran out on the edge's own clock reads as
// paused at its next attempt boundary and is reported as stopped by lease loss.
func TestEdge_LostLeaseReadsAsPaused(t *testing.T) {
	src := expiring{Local: lease.NewLocal(lease.LocalOptions{}), ttl: 300 * time.Millisecond}
	var sawValid, sawPaused atomic.Bool
	fl := newFlow(func(ctx context.Context, h hostflow.Host) hostflow.Result {
		if !h.Pause.Paused() {
			sawValid.Store(true)
		}
		// An RPC attempt boundary every 20ms until the host reads as paused.
		for !h.Pause.Paused() {
			time.Sleep(20 * time.Millisecond)
		}
		sawPaused.Store(true)
		return hostflow.Result{Outcome: hostflow.Paused, Err: errors.New("paused")}
	})
	var mu sync.Mutex
	var results []hostflow.Result
	run(t, edge.Options{Workers: 4, Interval: time.Hour, LeaseMargin: 100 * time.Millisecond, Flow: fl, Mode: edge.Standalone(src), Finder: &finder{ids: []string{"a"}},
		OnResult: func(r hostflow.Result) { mu.Lock(); results = append(results, r); mu.Unlock() }})
	// OnResult runs after the outcome is counted: wait for the result itself.
	testkit.WaitFor(t, 10*time.Second, "the host's result", func() bool { mu.Lock(); defer mu.Unlock(); return len(results) == 1 })
	mu.Lock()
	defer mu.Unlock()
	if !sawValid.Load() || !sawPaused.Load() {
		t.Fatalf("valid %v, then paused %v", sawValid.Load(), sawPaused.Load())
	}
	if len(results) != 1 || results[0].Err == nil || !contains(results[0].Err.Error(), "stopped by lease loss") {
		t.Fatalf("results %+v, want one stopped by lease loss", results)
	}
}

// A lease runs out on the edge's clock mid-flow only when its renewals did not get through (the
// coordinators' expiry handles an edge that went silent): the node had no part in it, so its
// result is a release, which costs it no attempt; counted as failures, repeated elections or a
// long partition abandoned healthy nodes.
func TestEdge_ALeaseLostMidFlowIsReleasedWithoutAnAttempt(t *testing.T) {
	reports := &reportLog{}
	src := expiring{Local: lease.NewLocal(lease.LocalOptions{}), ttl: 300 * time.Millisecond, reports: reports}
	fl := newFlow(func(ctx context.Context, h hostflow.Host) hostflow.Result {
		for !h.Pause.Paused() {
			time.Sleep(20 * time.Millisecond)
		}
		return hostflow.Result{Outcome: hostflow.Paused, Err: errors.New("paused")}
	})
	run(t, edge.Options{Workers: 4, Interval: time.Hour, LeaseMargin: 100 * time.Millisecond, Flow: fl, Mode: edge.Standalone(src), Finder: &finder{ids: []string{"a"}}})
	testkit.WaitFor(t, 10*time.Second, "the host's result reported", func() bool {
		reports.mu.Lock()
		defer reports.mu.Unlock()
		return len(reports.results) > 0
	})
	reports.mu.Lock()
	defer reports.mu.Unlock()
	r := reports.results[0]
	if r.Identity != "a" || r.Outcome != api.OutcomeReleased || !contains(r.Error, "stopped by lease loss") {
		t.Fatalf("reported %+v, want a released, stopped by lease loss", r)
	}
}

// TestEdge_OperatorPauseStopsNewWork: while paused nothing is acquired or swept; resume sweeps at once.
func TestEdge_OperatorPauseStopsNewWork(t *testing.T) {
	f := &finder{ids: []string{"a", "b"}}
	fl := newFlow(provisioned)
	e, err := edge.New(tuned(edge.Options{Workers: 2, Interval: time.Hour, Flow: fl, Finder: f, Metrics: metrics.New(),
		Mode: edge.Standalone(lease.NewLocal(lease.LocalOptions{}))}))
	if err != nil {
		t.Fatal(err)
	}
	e.Pause()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	defer func() { cancel(); <-done }()
	testkit.WaitFor(t, 5*time.Second, "the edge running", e.Ready)
	if f.sweeps.Load() != 0 || e.Stats().Outcomes[hostflow.Provisioned] != 0 {
		t.Fatalf("paused edge swept %d times and provisioned %d", f.sweeps.Load(), e.Stats().Outcomes[hostflow.Provisioned])
	}
	e.Resume()
	testkit.WaitFor(t, 10*time.Second, "both provisioned after resume", func() bool { return e.Stats().Outcomes[hostflow.Provisioned] == 2 })
}

// TestEdge_UnknownRestartSettledByRediscovery: a restart without a reply is provisioned when
// the node has left provisioning mode, failed when it still answers there.
func TestEdge_UnknownRestartSettledByRediscovery(t *testing.T) {
	f := &finder{ids: []string{"gone", "stuck"}, present: func(id string) bool { return id == "stuck" }}
	fl := newFlow(func(ctx context.Context, h hostflow.Host) hostflow.Result {
		return hostflow.Result{Outcome: hostflow.Unknown, Step: "restart", Err: errors.New("no reply")}
	})
	var mu sync.Mutex
	got := map[string]hostflow.Result{}
	run(t, edge.Options{Workers: 2, Interval: time.Hour, ConfirmAfter: 50 * time.Millisecond, Flow: fl, Finder: f,
		OnResult: func(r hostflow.Result) { mu.Lock(); got[r.Identity] = r; mu.Unlock() }})
	// OnResult runs after the outcome is counted: wait for the results themselves.
	testkit.WaitFor(t, 10*time.Second, "both settled", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 2 })
	mu.Lock()
	defer mu.Unlock()
	if got["gone"].Outcome != hostflow.Provisioned || got["stuck"].Outcome != hostflow.Failed || !contains(got["stuck"].Err.Error(), "still in provisioning mode") {
		t.Fatalf("settled as %+v", got)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// reconnecting is a finder whose broker connection can be made to come back.
type reconnecting struct {
	finder
	mu sync.Mutex
	f  func()
}

func (r *reconnecting) OnReconnect(f func()) { r.mu.Lock(); r.f = f; r.mu.Unlock() }

func (r *reconnecting) reconnect() {
	r.mu.Lock()
	f := r.f
	r.mu.Unlock()
	if f != nil {
		f()
	}
}

// Startup events published while the broker was down are lost: a reconnect sweeps at once
// rather than at the next interval.
func TestEdge_BrokerReconnectSweepsAtOnce(t *testing.T) {
	f := &reconnecting{finder: finder{ids: []string{"a"}}}
	e, _ := run(t, edge.Options{Workers: 2, Interval: time.Hour, Flow: newFlow(provisioned), Finder: f})
	testkit.WaitFor(t, 10*time.Second, "the first sweep", func() bool { return f.sweeps.Load() == 1 && e.Ready() })
	f.reconnect()
	testkit.WaitFor(t, 10*time.Second, "a sweep after the reconnect", func() bool { return f.sweeps.Load() == 2 })
}

// shrinking is a lease source whose leases run out after ttl unless renewed, and whose renewal
// answers no longer list the node drop: the ledger recorded another lease's late result for it.
type shrinking struct {
	expiring
	drop string
}

func (s shrinking) Renew(_ context.Context, l api.Lease) (lease.Grant, error) {
	l.Nodes = slices.DeleteFunc(slices.Clone(l.Nodes), func(id string) bool { return id == s.drop })
	l.TTL = api.Duration(s.ttl)
	return lease.Grant{Lease: &l}, nil
}

// TestEdge_NodeLeftOutOfARenewalReadsAsPaused: a host whose node a renewal answer no longer
// lists reads as paused at its next attempt boundary although the lease itself stays valid, and
// the other hosts of the lease go on.
func TestEdge_NodeLeftOutOfARenewalReadsAsPaused(t *testing.T) {
	src := shrinking{expiring: expiring{Local: lease.NewLocal(lease.LocalOptions{}), ttl: 600 * time.Millisecond}, drop: "b"}
	var finish atomic.Bool
	fl := newFlow(func(ctx context.Context, h hostflow.Host) hostflow.Result {
		// An RPC attempt boundary every 20ms until the host reads as paused or may finish.
		for !h.Pause.Paused() {
			if finish.Load() && h.Identity == "a" {
				return hostflow.Result{Outcome: hostflow.Provisioned}
			}
			time.Sleep(20 * time.Millisecond)
		}
		return hostflow.Result{Outcome: hostflow.Paused, Err: errors.New("paused")}
	})
	var mu sync.Mutex
	got := map[string]hostflow.Result{}
	e, _ := run(t, edge.Options{Workers: 4, BatchSize: 2, Interval: time.Hour, LeaseMargin: 100 * time.Millisecond, Flow: fl, Mode: edge.Standalone(src), Finder: &finder{ids: []string{"a", "b"}},
		OnResult: func(r hostflow.Result) { mu.Lock(); got[r.Identity] = r; mu.Unlock() }})
	testkit.WaitFor(t, 10*time.Second, "b's host stopped", func() bool { return e.Stats().Outcomes[hostflow.Paused] == 1 })
	finish.Store(true)
	testkit.WaitFor(t, 10*time.Second, "both results", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 2 })
	mu.Lock()
	defer mu.Unlock()
	if got["b"].Outcome != hostflow.Paused || contains(got["b"].Err.Error(), "stopped by lease loss") || got["a"].Outcome != hostflow.Provisioned {
		t.Fatalf("results %+v, want b paused (not by lease loss) and a provisioned", got)
	}
}

// clusterParts are the calls of a coordinator source a test does not exercise, for a fake that
// runs an edge in cluster mode (edge.Cluster): acquires that carry nothing, no replicated
// pause, nothing unsettled. A fake overrides the ones it tests.
type clusterParts struct{}

func (clusterParts) Carries() bool { return false }

func (clusterParts) AcquireCarrying(context.Context, int, time.Duration, []lease.Delivery) (lease.Grant, []lease.Delivered, error) {
	return lease.Grant{}, nil, errors.New("this test source carries no reports")
}

func (clusterParts) Deliver(context.Context, lease.Delivery) (api.ReportResponse, error) {
	return api.ReportResponse{}, errors.New("this test source carries no reports")
}

func (clusterParts) Unsettled(...string) {}

func (clusterParts) WatchPause(context.Context, func(bool, api.PauseMark)) {}
