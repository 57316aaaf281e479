// SPDX-License-Identifier: Apache-2.0

package helper

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

type countingRunner struct{ calls atomic.Int64 }

func (c *countingRunner) Run(context.Context, *Request) (*Response, error) {
	c.calls.Add(1)
	return &Response{}, nil
}
func (c *countingRunner) Close() error { return nil }

// TestLimit_HoldsCallsToTheRate: with helper_rate 10, 15 calls take at least the half second
// the five beyond the first second's burst must wait; a cancelled wait fails without calling.
func TestLimit_HoldsCallsToTheRate(t *testing.T) {
	inner := &countingRunner{}
	r := Limit(inner, 10)
	start := time.Now()
	for range 15 {
		if _, err := r.Run(context.Background(), &Request{Identity: "n"}); err != nil {
			t.Fatal(err)
		}
	}
	if took := time.Since(start); took < 400*time.Millisecond || inner.calls.Load() != 15 {
		t.Fatalf("15 calls at 10/s took %s (%d calls); want at least 0.4 s", took, inner.calls.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Run(ctx, &Request{Identity: "n"}); !errors.Is(err, context.Canceled) || inner.calls.Load() != 15 {
		t.Fatalf("a cancelled wait: %v, %d calls", err, inner.calls.Load())
	}
	if Limit(inner, 0) != Runner(inner) {
		t.Fatal("helper_rate 0 must leave the runner unlimited")
	}
}
