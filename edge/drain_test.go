// SPDX-License-Identifier: Apache-2.0

package edge_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/pkg/rpc"
	"github.com/seed96588659/muster/pkg/testkit"
)

// inFlight is a flow whose one call waits for answer (a reply on its way) or for its context.
type inFlight struct {
	answer  chan struct{}
	started chan rpc.PauseSource
	mu      sync.Mutex
	ctxErr  error
}

func (f *inFlight) run(ctx context.Context, h hostflow.Host) hostflow.Result {
	f.started <- h.Pause
	select {
	case <-f.answer:
	case <-ctx.Done():
		f.mu.Lock()
		f.ctxErr = ctx.Err()
		f.mu.Unlock()
		return hostflow.Result{Outcome: hostflow.Failed, Step: "configure", Err: ctx.Err()}
	}
	if h.Pause.Paused() {
		// The next attempt boundary: given back.
		return hostflow.Result{Outcome: hostflow.Paused, Step: "restart", Err: rpc.ErrPaused}
	}
	return hostflow.Result{Outcome: hostflow.Provisioned}
}

// On SIGTERM (Run's context ends) a host in flight is not cut off: its pause source turns true
// so it stops at its next attempt boundary and is given back, and the call waiting for its reply
// gets the answer. Cancelling every call at once made each one a failure with an attempt counted.
func TestEdge_StopLetsTheCallInFlightFinishThenGivesTheHostBack(t *testing.T) {
	f := &inFlight{answer: make(chan struct{}), started: make(chan rpc.PauseSource, 1)}
	var mu sync.Mutex
	var got []hostflow.Result
	_, stop := run(t, edge.Options{Workers: 1, Interval: time.Hour, Flow: newFlow(f.run), Finder: &finder{ids: []string{"a"}},
		OnResult: func(r hostflow.Result) { mu.Lock(); got = append(got, r); mu.Unlock() }})
	var pause rpc.PauseSource
	select {
	case pause = <-f.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the host never started")
	}
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	testkit.WaitFor(t, 10*time.Second, "the host's pause source to read true once the edge stops", pause.Paused)
	close(f.answer)
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("the edge did not stop after its last host ended")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].Outcome != hostflow.Paused {
		t.Fatalf("results %+v, want the host given back (paused) after its call's answer", got)
	}
	if f.ctxErr != nil {
		t.Fatalf("the call in flight was cancelled: %v", f.ctxErr)
	}
}

// A call that gets no answer is not waited on past DrainGrace: the edge still stops.
func TestEdge_StopCancelsACallInFlightAfterTheDrainGrace(t *testing.T) {
	f := &inFlight{answer: make(chan struct{}), started: make(chan rpc.PauseSource, 1)}
	_, stop := run(t, edge.Options{Workers: 1, Interval: time.Hour, DrainGrace: 50 * time.Millisecond, Flow: newFlow(f.run), Finder: &finder{ids: []string{"a"}}})
	select {
	case <-f.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the host never started")
	}
	stop()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ctxErr == nil {
		t.Fatal("the call was not cancelled, yet the edge stopped")
	}
}
