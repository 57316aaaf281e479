// SPDX-License-Identifier: Apache-2.0

package lease_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/api"
)

// fakeCoordinator answers with the raw bodies a test sets, so an answer from an older
// coordinator (no queue key at all) is exactly what it would send; it keeps every registration.
type fakeCoordinator struct {
	acquire, heartbeat, register, report atomic.Value // string
	// holdReport, when it holds a channel, makes a report wait for it to close, after saying so
	// on reportArrived (when that holds one).
	holdReport, reportArrived atomic.Value // chan struct{}

	mu         sync.Mutex
	registered [][]string
}

func (f *fakeCoordinator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body any
	switch r.URL.Path {
	case api.PathAcquire:
		body = f.acquire.Load()
	case api.PathHeartbeat:
		body = f.heartbeat.Load()
	case api.PathRegister:
		var req api.RegisterRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		ids := []string{}
		for _, n := range req.Nodes {
			ids = append(ids, n.Identity)
		}
		f.mu.Lock()
		f.registered = append(f.registered, ids)
		f.mu.Unlock()
		body = f.register.Load()
	case api.PathReport:
		if c, ok := f.reportArrived.Load().(chan struct{}); ok {
			c <- struct{}{}
		}
		if c, ok := f.holdReport.Load().(chan struct{}); ok {
			<-c
		}
		body = f.report.Load()
	}
	if body == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(body.(string)))
}

// queueRecorder keeps every count the source handed to Changed.
type queueRecorder struct {
	mu  sync.Mutex
	got []lease.Counts
}

func (q *queueRecorder) changed(c lease.Counts) {
	q.mu.Lock()
	q.got = append(q.got, c)
	q.mu.Unlock()
}

func (q *queueRecorder) all() []lease.Counts {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]lease.Counts(nil), q.got...)
}

func newFakeSource(t *testing.T) (*fakeCoordinator, *lease.Coordinator, *queueRecorder) {
	t.Helper()
	f := &fakeCoordinator{}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	client, err := api.NewClient([]string{srv.URL}, api.WithAttempts(1))
	if err != nil {
		t.Fatal(err)
	}
	rec := &queueRecorder{}
	o := lease.DefaultCoordinatorOptions()
	o.Client, o.Edge, o.Region, o.Heartbeat, o.Changed = client, "edge-eu-1", "eu", 10*time.Millisecond, rec.changed
	src, err := lease.NewCoordinator(o)
	if err != nil {
		t.Fatal(err)
	}
	return f, src, rec
}

// pauseFlag is one heartbeat's pause flag and where in the log it holds.
type pauseFlag struct {
	paused bool
	at     api.PauseMark
}

// watchPause runs src's heartbeats until the test ends and hands on each pause flag they read;
// a flag the test is not reading yet is dropped rather than stall the heartbeats.
func watchPause(t *testing.T, src *lease.Coordinator) <-chan pauseFlag {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	flags := make(chan pauseFlag, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		src.WatchPause(ctx, func(paused bool, at api.PauseMark) {
			select {
			case flags <- pauseFlag{paused: paused, at: at}:
			default:
			}
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return flags
}

const grantForThisEdge = `"lease":{"id":"l-1","edge":"edge-eu-1","region":"eu","nodes":["n1"],"token":4,"expires_at":"2026-01-02T03:04:05Z","ttl":"30s"}`

// An acquire answer's queue reaches Changed, zeros included; an older coordinator's answer (no
// queue) and an answer the edge refuses (a lease for another edge) call nothing, so the gauges
// keep their last value rather than drop to 0.
func TestCoordinator_AcquireHandsTheAnswersQueueToChanged(t *testing.T) {
	f, src, rec := newFakeSource(t)
	ctx := context.Background()

	f.acquire.Store(`{"paused":false,` + grantForThisEdge + `,"queue":{"waiting":5,"leased":3}}`)
	if g, err := src.Acquire(ctx, 10, 0); err != nil || g.Lease == nil {
		t.Fatalf("acquire: %+v, %v", g, err)
	}
	f.acquire.Store(`{"paused":false}`) // an older coordinator: nothing granted, no queue
	if _, err := src.Acquire(ctx, 10, 0); err != nil {
		t.Fatalf("acquire from an older coordinator: %v", err)
	}
	f.acquire.Store(`{"paused":false,"lease":{"id":"l-2","edge":"edge-eu-2","region":"eu","nodes":["n2"],"token":5,"expires_at":"2026-01-02T03:04:05Z","ttl":"30s"},"queue":{"waiting":9,"leased":9}}`)
	if _, err := src.Acquire(ctx, 10, 0); err == nil {
		t.Fatal("a lease for another edge was accepted")
	}
	f.acquire.Store(`{"paused":false,"queue":{"waiting":0,"leased":0}}`)
	if _, err := src.Acquire(ctx, 10, 0); err != nil {
		t.Fatal(err)
	}

	want := []lease.Counts{{Waiting: 5, Leased: 3}, {}}
	if got := rec.all(); len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("Changed got %+v, want %+v", got, want)
	}
}

// Every heartbeat answer with a queue reaches Changed before its pause flag reaches changed;
// once the answers stop carrying one (the edge now talks to an older coordinator), heartbeats go
// on and Changed is not called again.
func TestCoordinator_HeartbeatHandsTheAnswersQueueToChanged(t *testing.T) {
	f, src, rec := newFakeSource(t)
	f.heartbeat.Store(`{"paused":false,"time":"2026-01-02T03:04:05Z","queue":{"waiting":2,"leased":1}}`)
	beats := watchPause(t, src)
	waitBeat := func() {
		t.Helper()
		select {
		case <-beats:
		case <-time.After(10 * time.Second):
			t.Fatal("no heartbeat answered")
		}
	}

	waitBeat()
	got := rec.all()
	if len(got) == 0 || got[len(got)-1] != (lease.Counts{Waiting: 2, Leased: 1}) {
		t.Fatalf("after a heartbeat with a queue, Changed got %+v", got)
	}

	f.heartbeat.Store(`{"paused":true,"time":"2026-01-02T03:04:05Z"}`)
	// Drain until an answer of the older coordinator (paused) arrived, then two more.
	for paused := false; !paused; {
		select {
		case f := <-beats:
			paused = f.paused
		case <-time.After(10 * time.Second):
			t.Fatal("no heartbeat answered")
		}
	}
	before := len(rec.all())
	waitBeat()
	waitBeat()
	if after := rec.all(); len(after) != before || after[len(after)-1] != (lease.Counts{Waiting: 2, Leased: 1}) {
		t.Fatalf("answers without a queue called Changed: %+v (had %d calls)", after, before)
	}
}

// Each answer's pause epoch and index reach the edge with its flag, from acquires and
// heartbeats: the edge orders the flags of concurrent answers by them.
func TestCoordinator_AnswersHandOnTheIndexTheirPauseFlagHoldsAt(t *testing.T) {
	f, src, _ := newFakeSource(t)
	f.acquire.Store(`{"paused":true,"pause_as_of":7,"pause_epoch":3}`)
	if g, err := src.Acquire(context.Background(), 10, 0); err != nil || !g.Paused || g.PauseAt != (api.PauseMark{Epoch: 3, AsOf: 7}) {
		t.Fatalf("acquire = %+v, %v; want paused as of 7 in epoch 3", g, err)
	}
	f.heartbeat.Store(`{"paused":false,"pause_as_of":9,"pause_epoch":3,"time":"2026-01-02T03:04:05Z"}`)
	select {
	case got := <-watchPause(t, src):
		if got != (pauseFlag{at: api.PauseMark{Epoch: 3, AsOf: 9}}) {
			t.Fatalf("heartbeat's pause flag %+v, want not paused as of 9 in epoch 3", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no heartbeat answered")
	}
}
