// SPDX-License-Identifier: Apache-2.0

package discovery

import (
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"
)

// EventLimits bound the startup events waiting to be handled. An event beyond them is dropped
// and counted; its node, still in provisioning mode, answers the next discovery sweep.
type EventLimits struct {
	// PendingMsgs and PendingBytes bound the events NATS holds while the edge is busy (a
	// register backlog); more are dropped.
	PendingMsgs  int
	PendingBytes int
	// MaxSize is the largest event decoded; a larger one is dropped unread (a real startup event
	// is under 1 KiB).
	MaxSize int
}

// DefaultEventLimits hold a boot storm of 4,096 events in at most 4 MiB.
func DefaultEventLimits() EventLimits {
	return EventLimits{PendingMsgs: 4096, PendingBytes: 4 << 20, MaxSize: 8 << 10}
}

// Validate refuses a limit that is not positive, naming the field.
func (l EventLimits) Validate() error {
	for _, f := range []struct {
		field string
		v     int
	}{{"PendingMsgs", l.PendingMsgs}, {"PendingBytes", l.PendingBytes}, {"MaxSize", l.MaxSize}} {
		if f.v <= 0 {
			return fmt.Errorf("discovery: Events.%s is %d, want a positive number", f.field, f.v)
		}
	}
	return nil
}

// Drop reasons of a DroppedError.
const (
	// DropOversized: the event was larger than EventLimits.MaxSize.
	DropOversized = "oversized"
	// DropOverflow: the pending events were at EventLimits' bounds.
	DropOverflow = "overflow"
)

// DroppedError reports startup events Listen dropped unread.
type DroppedError struct {
	Reason string
	Count  int
}

func (e *DroppedError) Error() string {
	return fmt.Sprintf("%d startup events dropped (%s)", e.Count, e.Reason)
}

// DroppedEvents says why and how many.
func (e *DroppedError) DroppedEvents() (reason string, n int) { return e.Reason, e.Count }

// EventStats are the startup events Listen holds and has dropped.
type EventStats struct {
	Pending      int
	PendingBytes int
	Dropped      int // by NATS at the pending bounds
}

// eventSub is Listen's subscription, set once it is in place.
type eventSub struct {
	mu  sync.Mutex
	sub *nats.Subscription
}

func (s *eventSub) set(sub *nats.Subscription) {
	s.mu.Lock()
	s.sub = sub
	s.mu.Unlock()
}

// Events reads the startup events Listen holds now and has dropped at its bounds; zero before
// Listen.
func (d *Discoverer) Events() EventStats {
	d.events.mu.Lock()
	sub := d.events.sub
	d.events.mu.Unlock()
	if sub == nil {
		return EventStats{}
	}
	var st EventStats
	st.Pending, st.PendingBytes, _ = sub.Pending()
	st.Dropped, _ = sub.Dropped()
	return st
}
