// SPDX-License-Identifier: Apache-2.0

package rpc

import (
	"context"
	"errors"
	"testing"
	"time"
)

// until is a pause source whose lease ends at a fixed instant.
type until struct {
	at     time.Time
	paused bool
}

func (u until) Paused() bool                { return u.paused }
func (u until) Deadline() (time.Time, bool) { return u.at, true }

func fencedReq(p PauseSource) Request {
	return Request{Agent: "rpcutil", Action: "inventory", Identity: "n1", Pause: p}
}

// TestCheck_V1RequestIsValidOnTheNodeNoLongerThanItsLease: over leases from 1 s to two minutes
// left and every tenth of a second of the wall clock, a v1 request's validity on a node
// (created + ttl, Choria's check) ends no later than the lease, on the edge's clock; it is valid
// for at least a second when sent; it is never dated after its check; its TTL is one
// go-choria's schema admits (at least 30) and at most the framework's.
func TestCheck_V1RequestIsValidOnTheNodeNoLongerThanItsLease(t *testing.T) {
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for tenth := range 10 {
		now := base.Add(time.Duration(tenth) * 100 * time.Millisecond)
		for left := time.Second; left <= 2*time.Minute; left += 137 * time.Millisecond {
			f, err := check(fencedReq(until{at: now.Add(left)}), now, 60, true)
			end := f.created.Add(time.Duration(f.ttl) * time.Second)
			switch {
			case errors.Is(err, ErrFenced):
				// Only when rounding to the second leaves under one.
				if valid := time.Unix(now.Add(left).Unix(), 0).Sub(now); valid >= time.Second {
					t.Fatalf("now %s, %v left: fenced with %v valid: %v", now, left, valid, err)
				}
				continue
			case err != nil:
				t.Fatal(err)
			case end.After(now.Add(left)):
				t.Fatalf("now %s, %v left: valid on the node until %s, after the lease's end %s", now, left, end, now.Add(left))
			case end.Sub(now) < time.Second:
				t.Fatalf("now %s, %v left: valid for only %v when sent", now, left, end.Sub(now))
			case f.created.After(now):
				t.Fatalf("now %s, %v left: dated %s, after its check", now, left, f.created)
			case f.ttl < v1MinTTL || f.ttl > 60:
				t.Fatalf("now %s, %v left: ttl %d", now, left, f.ttl)
			}
		}
	}
}

func TestCheck_WithoutDeadlineTheFrameworkTTL(t *testing.T) {
	now := time.Now()
	for name, p := range map[string]PauseSource{
		"no pause source":    nil,
		"pause without end":  PauseFunc(func() bool { return false }),
		"lease never ending": endless{},
	} {
		f, err := check(fencedReq(p), now, 60, true)
		if err != nil || f.ttl != 60 || !f.created.Equal(now) {
			t.Errorf("%s: ttl %d created %s, %v; want 60 at the check", name, f.ttl, f.created, err)
		}
	}
}

type endless struct{}

func (endless) Paused() bool                { return false }
func (endless) Deadline() (time.Time, bool) { return time.Time{}, false }

func TestCheck_RefusesPausedAndUnderASecond(t *testing.T) {
	now := time.Now()
	for name, tc := range map[string]struct {
		p        PauseSource
		v1       bool
		deadline bool
	}{
		"paused":             {until{at: now.Add(time.Hour), paused: true}, true, false},
		"v1 0.9 s left":      {until{at: now.Add(900 * time.Millisecond)}, true, true},
		"v1 lease ended":     {until{at: now.Add(-time.Second)}, true, true},
		"v2 1.2 s left":      {until{at: now.Add(1200 * time.Millisecond)}, false, true},
		"pause func, paused": {PauseFunc(func() bool { return true }), true, false},
	} {
		_, err := check(fencedReq(tc.p), now, 60, tc.v1)
		if !errors.Is(err, ErrFenced) || !errors.Is(err, ErrPaused) || errors.Is(err, ErrDeadline) != tc.deadline {
			t.Errorf("%s: want fenced (deadline %v), got %v", name, tc.deadline, err)
		}
	}
}

// TestCheck_V2TTLIsTheWholeSecondsLeftAfterItsDating: go-choria dates a v2 request while
// encoding it, at most MaxStall after the check; its TTL (minimum 1) ends the lease.
func TestCheck_V2TTLIsTheWholeSecondsLeftAfterItsDating(t *testing.T) {
	now := time.Now()
	for left, want := range map[time.Duration]int{2500 * time.Millisecond: 2, 10 * time.Second: 9, time.Hour: 60} {
		f, err := check(fencedReq(until{at: now.Add(left)}), now, 60, false)
		if err != nil || f.ttl != want {
			t.Errorf("%v left: ttl %d, %v; want %d", left, f.ttl, err, want)
		}
	}
}

func TestRecheck_StallOrPauseVoidsTheAttempt(t *testing.T) {
	now := time.Now()
	paused := false
	p := PauseFunc(func() bool { return paused })
	f, err := check(fencedReq(p), now, 60, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.recheck(fencedReq(p), now.Add(MaxStall)); err != nil {
		t.Fatalf("at MaxStall: %v", err)
	}
	if err := f.recheck(fencedReq(p), now.Add(MaxStall+time.Millisecond)); !errors.Is(err, ErrFenced) {
		t.Fatalf("past MaxStall: want fenced, got %v", err)
	}
	paused = true
	if err := f.recheck(fencedReq(p), now); !errors.Is(err, ErrFenced) {
		t.Fatalf("paused since the check: want fenced, got %v", err)
	}
	if err := (fence{}).recheck(fencedReq(nil), now.Add(time.Hour)); err != nil {
		t.Fatalf("no pause source: %v", err)
	}
}

// TestNode_FencedRequestEndsTheCallAsPaused: a transport that fenced a request (not sent) ends
// the call at once as a pause, not as a failed attempt to retry: the host is given back as at
// lease loss. Every request carries the node's pause source to where it is published.
func TestNode_FencedRequestEndsTheCallAsPaused(t *testing.T) {
	w, reg := newTestWrapper(t)
	pause := until{at: time.Now().Add(time.Hour)}
	tr := &scripted{answer: func(_ int, req Request) ([]Reply, error) {
		return nil, fencedError{req: req, reason: "stalled"}
	}}
	_, err := NewNode(w, tr, "n1.example.net", "token", pause).Inventory(context.Background())
	if !errors.Is(err, ErrPaused) || errors.Is(err, ErrMaxTries) {
		t.Fatalf("got %v, want the call ended as paused", err)
	}
	if len(tr.requests) != 1 || tr.requests[0].Pause != PauseSource(pause) {
		t.Fatalf("%d requests, the first carrying pause %v", len(tr.requests), tr.requests[0].Pause)
	}
	if got := reg.RPCAttempts("eu", "rpcutil#inventory"); got != 1 {
		t.Fatalf("%d attempts, want 1", got)
	}
}
