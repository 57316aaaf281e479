// SPDX-License-Identifier: Apache-2.0

package rpc

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/choria-io/go-choria/backoff"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/seed96588659/muster/pkg/metrics"
	"github.com/seed96588659/muster/pkg/testkit"
)

const testAction = "choria_provision#jwt"

func newTestWrapper(t *testing.T, millis ...int) (*Wrapper, *metrics.Registry) {
	t.Helper()
	if len(millis) == 0 {
		millis = []int{1}
	}
	reg := metrics.New()
	w, err := NewWrapper(WrapperOptions{Site: "eu", Metrics: reg, Policy: backoff.Policy{Millis: millis}})
	if err != nil {
		t.Fatal(err)
	}
	return w, reg
}

var never = PauseFunc(func() bool { return false })

func TestWrapper_GivesUpAfterTriesWithOneErrorCount(t *testing.T) {
	w, reg := newTestWrapper(t)
	var calls atomic.Int32
	err := w.Run(context.Background(), never, testAction, 3, func(context.Context) error {
		calls.Add(1)
		return errors.New("no answer")
	})
	if !errors.Is(err, ErrMaxTries) || !strings.Contains(err.Error(), "maximum tries reached") {
		t.Fatalf("want maximum tries reached, got %v", err)
	}
	if calls.Load() != 3 || reg.RPCAttempts("eu", testAction) != 3 {
		t.Fatalf("want 3 attempts timed, got %d calls, %d samples", calls.Load(), reg.RPCAttempts("eu", testAction))
	}
	if got := testutil.ToFloat64(reg.RPCErrors.WithLabelValues("eu", testAction)); got != 1 {
		t.Fatalf("rpc_errors = %v, want 1", got)
	}
}

func TestWrapper_SuccessCountsNoError(t *testing.T) {
	w, reg := newTestWrapper(t)
	var calls int
	err := w.Run(context.Background(), never, testAction, 5, func(context.Context) error {
		calls++
		if calls < 2 {
			return errors.New("transient")
		}
		return nil
	})
	if err != nil || calls != 2 || reg.RPCAttempts("eu", testAction) != 2 {
		t.Fatalf("err=%v calls=%d samples=%d", err, calls, reg.RPCAttempts("eu", testAction))
	}
	if got := testutil.ToFloat64(reg.RPCErrors.WithLabelValues("eu", testAction)); got != 0 {
		t.Fatalf("rpc_errors = %v, want 0", got)
	}
}

func TestWrapper_PausedBeforeCallMakesNoAttempt(t *testing.T) {
	w, reg := newTestWrapper(t)
	err := w.Run(context.Background(), PauseFunc(func() bool { return true }), testAction, 5, func(context.Context) error {
		t.Fatal("callback ran while paused")
		return nil
	})
	if !errors.Is(err, ErrPaused) || !strings.HasSuffix(err.Error(), "provisioning is paused, cannot perform "+testAction) {
		t.Fatalf("got %v", err)
	}
	if reg.RPCAttempts("eu", testAction) != 0 {
		t.Fatalf("paused call was timed")
	}
}

func TestWrapper_PauseStopsAtNextAttempt(t *testing.T) {
	w, reg := newTestWrapper(t)
	var paused atomic.Bool
	var calls int
	err := w.Run(context.Background(), PauseFunc(paused.Load), testAction, 5, func(context.Context) error {
		calls++
		if calls == 2 {
			paused.Store(true)
		}
		return errors.New("fail")
	})
	if !errors.Is(err, ErrPaused) || calls != 2 || reg.RPCAttempts("eu", testAction) != 2 {
		t.Fatalf("err=%v calls=%d samples=%d", err, calls, reg.RPCAttempts("eu", testAction))
	}
	if got := testutil.ToFloat64(reg.RPCErrors.WithLabelValues("eu", testAction)); got != 1 {
		t.Fatalf("rpc_errors = %v, want 1", got)
	}
}

func TestWrapper_LockHeldEndsAtOnce(t *testing.T) {
	w, _ := newTestWrapper(t)
	var calls int
	err := w.Run(context.Background(), never, testAction, 5, func(context.Context) error {
		calls++
		return &InvalidResponseError{Sender: "n1", Message: LockedMessage, Code: 1}
	})
	if !errors.Is(err, ErrLocked) || calls != 1 {
		t.Fatalf("err=%v calls=%d", err, calls)
	}
}

func TestWrapper_CancelDuringBackoffReturnsPromptly(t *testing.T) {
	// A backoff of an hour: only cancellation can end the wait.
	w, _ := newTestWrapper(t, 3_600_000)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	tried := make(chan struct{})
	go func() {
		done <- w.Run(ctx, never, testAction, 5, func(context.Context) error {
			close(tried)
			return errors.New("fail")
		})
	}()
	<-tried
	cancel()
	if err := testkit.Receive(t, done, 30*time.Second, "the wrapper to return after cancellation"); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

func TestWrapper_GivesUpWithoutSleepingAfterTheLastTry(t *testing.T) {
	// A backoff of an hour: any sleep after the last attempt would hang the test.
	w, reg := newTestWrapper(t, 0, 0, 3_600_000)
	var calls int
	err := w.Run(context.Background(), never, testAction, 2, func(context.Context) error {
		calls++
		return errors.New("fail")
	})
	if !errors.Is(err, ErrMaxTries) || calls != 2 || reg.RPCAttempts("eu", testAction) != 2 {
		t.Fatalf("err=%v calls=%d samples=%d", err, calls, reg.RPCAttempts("eu", testAction))
	}
}

func TestWrapper_RefusesAMissingPauseSource(t *testing.T) {
	w, reg := newTestWrapper(t)
	err := w.Run(context.Background(), nil, testAction, 3, func(context.Context) error {
		t.Fatal("callback ran without a pause source")
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "no pause source") {
		t.Fatalf("got %v", err)
	}
	if reg.RPCAttempts("eu", testAction) != 0 {
		t.Fatal("an attempt was timed")
	}
}

// BenchmarkWrapper_Run is the wrapper's own cost per call that succeeds at once: pause checks,
// the backoff loop, the attempt timer and the result handling, without any RPC.
func BenchmarkWrapper_Run(b *testing.B) {
	reg := metrics.New()
	w, err := NewWrapper(WrapperOptions{Site: "eu", Metrics: reg})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	ok := func(context.Context) error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Run(ctx, never, testAction, TriesJWT, ok); err != nil {
			b.Fatal(err)
		}
	}
}
