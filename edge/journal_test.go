// SPDX-License-Identifier: Apache-2.0

package edge_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/edge/journal"
	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// reports is a lease source (the standalone queue underneath) that keeps every report it is
// handed, and answers those of leases it never granted as applied, as the ledger answers a late
// result of its own earlier grant.
type reports struct {
	*lease.Local
	mu  sync.Mutex
	got map[string]reported
}

type reported struct {
	lease  api.Lease
	result api.NodeResult
}

func newReports() *reports {
	return &reports{Local: lease.NewLocal(lease.LocalOptions{Edge: "e", Region: "r"}), got: map[string]reported{}}
}

func (s *reports) Report(ctx context.Context, l api.Lease, results []api.NodeResult) (api.ReportResponse, error) {
	s.mu.Lock()
	for _, r := range results {
		s.got[r.Identity] = reported{lease: l, result: r}
	}
	s.mu.Unlock()
	resp, err := s.Local.Report(ctx, l, results)
	if len(resp.Rejected) == len(results) {
		resp = api.ReportResponse{Applied: lease.Identities(results)}
	}
	return resp, err
}

func (s *reports) of(id string) (reported, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.got[id]
	return r, ok
}

func openJournal(t *testing.T, path string) (*journal.Journal, []journal.Intent) {
	t.Helper()
	j, left, err := journal.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return j, left
}

// An edge SIGKILLed after sending restarts leaves their intents open; the next run settles each
// by rediscovery and reports it under the lease id and token it was sent under.
func TestEdge_JournalReplayReportsUnderTheOriginalLease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	prev, _ := openJournal(t, path)
	old := time.Now().Add(-time.Minute)
	for _, in := range []journal.Intent{
		{Node: "restarted", Step: "restart", Lease: "L-old", Token: 3, Edge: "e", Region: "r", At: old},
		{Node: "stayed", Step: "restart", Lease: "L-old", Token: 3, Edge: "e", Region: "r", At: old},
		{Node: "shut", Step: "shutdown", Lease: "L-older", Token: 2, Edge: "e", Region: "r", At: old},
	} {
		if err := prev.Begin(context.Background(), in); err != nil {
			t.Fatal(err)
		}
	}
	prev.Close() // the kill: nothing was ever reported

	j, replay := openJournal(t, path)
	if len(replay) != 3 {
		t.Fatalf("%d intents left open, want 3", len(replay))
	}
	src := newReports()
	f := &finder{present: func(id string) bool { return id == "stayed" }}
	_, stop := run(t, edge.Options{Workers: 2, Interval: time.Hour, ConfirmAfter: 50 * time.Millisecond, Flow: newFlow(provisioned),
		Finder: f, Mode: edge.Standalone(src), Journal: j, Replay: replay})
	testkit.WaitFor(t, 10*time.Second, "three replayed results reported", func() bool {
		_, a := src.of("restarted")
		_, b := src.of("stayed")
		_, c := src.of("shut")
		return a && b && c
	})
	want := map[string]struct {
		outcome api.Outcome
		lease   string
		token   uint64
	}{
		"restarted": {api.OutcomeProvisioned, "L-old", 3},
		"stayed":    {api.OutcomeFailed, "L-old", 3},
		"shut":      {api.OutcomeShutdown, "L-older", 2},
	}
	for id, w := range want {
		r, _ := src.of(id)
		if r.result.Outcome != w.outcome || r.lease.ID != w.lease || r.lease.Token != w.token || r.lease.Edge != "e" || r.lease.Region != "r" {
			t.Errorf("%s reported %s under lease %s token %d (%s in %s), want %s under %s token %d", id, r.result.Outcome, r.lease.ID, r.lease.Token, r.lease.Edge, r.lease.Region, w.outcome, w.lease, w.token)
		}
	}
	stop()
	j.Close()
	if _, left := openJournal(t, path); len(left) != 0 {
		t.Fatalf("intents still open after their reports were answered: %+v", left)
	}
}

// The flow's hook records the intent before the restart goes out; the report's answer closes
// it. A restart the edge stopped before confirming stays open for the next run.
func TestEdge_JournalRecordsBeforeTheCallAndClosesOnTheAnswer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	j, _ := openJournal(t, path)
	var mu sync.Mutex
	recorded := map[string]bool{}
	fl := newFlow(func(ctx context.Context, h hostflow.Host) hostflow.Result {
		if h.Record == nil {
			return hostflow.Result{Outcome: hostflow.Failed, Err: errors.New("no Record hook with a journal")}
		}
		if err := h.Record(ctx, "restart"); err != nil {
			return hostflow.Result{Outcome: hostflow.Failed, Err: err}
		}
		mu.Lock()
		recorded[h.Identity] = true
		mu.Unlock()
		if h.Identity == "silent" {
			return hostflow.Result{Outcome: hostflow.Unknown, Step: "restart", Err: errors.New("no reply")}
		}
		return hostflow.Result{Outcome: hostflow.Provisioned}
	})
	src := newReports()
	e, stop := run(t, edge.Options{Workers: 4, Interval: time.Hour, ConfirmAfter: time.Hour, Flow: fl,
		Finder: &finder{ids: []string{"a", "b", "silent"}}, Mode: edge.Standalone(src), Journal: j})
	testkit.WaitFor(t, 10*time.Second, "a and b provisioned, silent's restart sent", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return e.Stats().Outcomes[hostflow.Provisioned] == 2 && recorded["silent"]
	})
	stop() // silent is waiting an hour for its confirmation: the edge stops first
	j.Close()
	_, left := openJournal(t, path)
	if len(left) != 1 || left[0].Node != "silent" || left[0].Step != "restart" || left[0].Lease == "" {
		t.Fatalf("open intents after the run: %+v, want only silent's restart under its lease", left)
	}
	if r, _ := src.of("a"); left[0].Lease == "" || r.lease.ID == "" {
		t.Fatalf("a was reported under lease %q", r.lease.ID)
	}
	// Not reported failed: the ledger would then refuse the provisioned the next run finds.
	if r, ok := src.of("silent"); ok {
		t.Fatalf("silent's unconfirmed restart was reported %s (%s); want nothing until it is settled", r.result.Outcome, r.result.Error)
	}
}

// A node that does not answer the flow's first call and is not found again left provisioning
// mode under an earlier lease: it is gone, not failed (no attempt burnt on it).
func TestEdge_FirstCallUnansweredSettledByRediscovery(t *testing.T) {
	f := &finder{ids: []string{"left", "slow"}, present: func(id string) bool { return id == "slow" }}
	fl := newFlow(func(ctx context.Context, h hostflow.Host) hostflow.Result {
		return hostflow.Result{Outcome: hostflow.Unknown, Step: "jwt", Err: errors.New("no reply")}
	})
	src := newReports()
	// ConfirmAfter is long: a first call is settled at once, there is no restart splay to wait out.
	run(t, edge.Options{Workers: 2, Interval: time.Hour, ConfirmAfter: time.Hour, Flow: fl, Finder: f, Mode: edge.Standalone(src)})
	testkit.WaitFor(t, 10*time.Second, "both reported", func() bool {
		_, a := src.of("left")
		_, b := src.of("slow")
		return a && b
	})
	if r, _ := src.of("left"); r.result.Outcome != api.OutcomeGone || !contains(r.result.Error, "no longer finds the node in provisioning mode") {
		t.Errorf("left reported %s (%q), want gone with its reason", r.result.Outcome, r.result.Error)
	}
	if r, _ := src.of("slow"); r.result.Outcome != api.OutcomeFailed || !contains(r.result.Error, "still in provisioning mode") {
		t.Errorf("slow reported %s (%s), want failed", r.result.Outcome, r.result.Error)
	}
}

// failingJournal refuses every intent, as a journal on a failed disk does.
type failingJournal struct{}

func (failingJournal) Begin(context.Context, journal.Intent) error { return errors.New("disk full") }
func (failingJournal) End(string, string)                          {}

// startedHosts are the hosts a flow began.
type startedHosts struct {
	mu  sync.Mutex
	ids map[string]bool
}

// needsJournal is a flow that notes each host it starts and records its restart in the journal
// before it would send it; a refused record gives the host back.
func needsJournal() (*flow, *startedHosts) {
	s := &startedHosts{ids: map[string]bool{}}
	return newFlow(func(ctx context.Context, h hostflow.Host) hostflow.Result {
		s.mu.Lock()
		s.ids[h.Identity] = true
		s.mu.Unlock()
		if err := h.Record(ctx, "restart"); err != nil {
			return hostflow.Result{Outcome: hostflow.Paused, Step: "restart", Err: err}
		}
		return hostflow.Result{Outcome: hostflow.Provisioned}
	}), s
}

// waitFirstReported waits until src holds a report of a started host: the broken journal halted the edge.
func (s *startedHosts) waitFirstReported(t *testing.T, src *reports) {
	t.Helper()
	testkit.WaitFor(t, 10*time.Second, "the first host reported", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for id := range s.ids {
			if _, ok := src.of(id); ok {
				return true
			}
		}
		return false
	})
}

// count is how many hosts the flow began.
func (s *startedHosts) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ids)
}

// A journal that refuses an intent halts the edge: the host whose restart could not be
// recorded is given back (released: nothing irreversible was sent), no further lease is taken,
// and /readyz turns false so the edge is replaced instead of failing every node of its region.
func TestEdge_BrokenJournalHaltsTheEdge(t *testing.T) {
	fl, started := needsJournal()
	src := newReports()
	e, _ := run(t, edge.Options{Workers: 1, BatchSize: 1, Interval: time.Hour, Flow: fl, Finder: &finder{ids: []string{"a", "b", "c"}}, Mode: edge.Standalone(src), Journal: failingJournal{}})
	started.waitFirstReported(t, src)
	if e.Ready() {
		t.Error("an edge whose journal failed still reads ready")
	}
	if n := started.count(); n != 1 {
		t.Errorf("%d hosts started, want only the first: a broken journal must stop new work", n)
	}
	started.mu.Lock()
	defer started.mu.Unlock()
	for id := range started.ids {
		if r, _ := src.of(id); r.result.Outcome != api.OutcomeReleased {
			t.Errorf("%s reported %s, want released", id, r.result.Outcome)
		}
	}
}

// sweepFails is a finder whose targeted sweeps fail a number of times before they answer.
type sweepFails struct {
	finder
	mu       sync.Mutex
	fails    int
	failures int
}

func (f *sweepFails) Sweep(ctx context.Context, ids ...string) ([]string, error) {
	if len(ids) > 0 {
		f.mu.Lock()
		fail := f.fails > 0
		if fail {
			f.fails--
			f.failures++
		}
		f.mu.Unlock()
		if fail {
			return nil, errors.New("broker unreachable")
		}
	}
	return f.finder.Sweep(ctx, ids...)
}

func (f *sweepFails) failed() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failures
}

// A failed rediscovery says nothing about the node: it is tried again. A result still
// unconfirmed after sweepTries is withheld, never reported failed: its lease lets go of it, its
// intent stays open, and once discovery answers it is reported under its lease id and token.
func TestEdge_FailedRediscoveryIsTriedAgainAndKeepsTheIntent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fails int
		want  api.Outcome // "" for nothing reported
		open  int
	}{
		{"answers on the third sweep", 2, api.OutcomeProvisioned, 0},
		{"answers on the sixth sweep", 5, api.OutcomeProvisioned, 0},
		{"never answers", 1 << 30, "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "journal")
			j, _ := openJournal(t, path)
			fl := newFlow(func(ctx context.Context, h hostflow.Host) hostflow.Result {
				if err := h.Record(ctx, "restart"); err != nil {
					return hostflow.Result{Outcome: hostflow.Paused, Err: err}
				}
				return hostflow.Result{Outcome: hostflow.Unknown, Step: "restart", Err: errors.New("no reply")}
			})
			src := newReports()
			f := &sweepFails{finder: finder{ids: []string{"a"}}, fails: tc.fails}
			_, stop := run(t, edge.Options{Workers: 1, Interval: time.Hour, ConfirmAfter: 20 * time.Millisecond, Flow: fl, Finder: f, Mode: edge.Standalone(src), Journal: j})
			if tc.want != "" {
				testkit.WaitFor(t, 10*time.Second, "a reported", func() bool { _, ok := src.of("a"); return ok })
			} else {
				testkit.WaitFor(t, 10*time.Second, "ten failed sweeps", func() bool { return f.failed() >= 10 })
			}
			stop()
			j.Close()
			r, ok := src.of("a")
			switch {
			case tc.want == "" && ok:
				t.Errorf("a reported %s (%s), want nothing while it is unconfirmed", r.result.Outcome, r.result.Error)
			case tc.want != "" && (r.result.Outcome != tc.want || r.lease.ID == "" || r.lease.Token == 0):
				t.Errorf("a reported %s (%s) under lease %q token %d, want %s under its grant", r.result.Outcome, r.result.Error, r.lease.ID, r.lease.Token, tc.want)
			}
			if _, left := openJournal(t, path); len(left) != tc.open {
				t.Errorf("%d intents open after the run, want %d", len(left), tc.open)
			}
		})
	}
}

// unsettledReports is reports that also records the nodes it is told an earlier run left
// unsettled (lease.Unsettler).
type unsettledReports struct {
	*reports
	clusterParts
	unsettled chan []string
}

func (s *unsettledReports) Unsettled(ids ...string) { s.unsettled <- ids }

// The nodes a killed run left intents for are handed to the source as unsettled when the next run
// replays them: that run's report may still land, so they are registered at every sighting.
func TestEdge_JournalReplayTellsTheSourceWhichNodesAreUnsettled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	prev, _ := openJournal(t, path)
	for _, node := range []string{"a", "b"} {
		if err := prev.Begin(context.Background(), journal.Intent{Node: node, Step: "restart", Lease: "L-old", Token: 3, Edge: "e", Region: "r", At: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	prev.Close()
	j, replay := openJournal(t, path)
	src := &unsettledReports{reports: newReports(), unsettled: make(chan []string, 1)}
	_, stop := run(t, edge.Options{Workers: 2, Interval: time.Hour, ConfirmAfter: time.Hour, Flow: newFlow(provisioned),
		Finder: &finder{}, Mode: edge.Cluster(src), Journal: j, Replay: replay})
	defer stop()
	select {
	case got := <-src.unsettled:
		slices.Sort(got)
		if !slices.Equal(got, []string{"a", "b"}) {
			t.Fatalf("unsettled %v, want [a b]", got)
		}
	case <-time.After(time.Minute):
		t.Fatal("the source was never told of the unsettled nodes")
	}
}
