// SPDX-License-Identifier: Apache-2.0

package coordinator

import (
	"context"
	"fmt"

	"github.com/seed96588659/muster/pkg/api"
)

// eventPage is how many events a reader takes from the ledger at a time: what one stream holds
// in memory, whatever the number of readers.
const eventPage = 256

// Events sends send every event of this member's event log after from that passes filter, in
// order, then (with follow) waits for more until ctx ends or send fails. Any member serves it
// from its own ledger, so a reader resumes on another member after a change of leader. Whenever
// the reader's position is older than the log's oldest event (it started too far behind, the
// log moved past it while it wrote a page or waited, or the member installed a snapshot that
// replaced its log) it first gets an api.EventReset naming the oldest: it missed events and
// should read the nodes again. It holds one page of events at a time: that is the queue
// between the ledger and a slow reader, and the writer's deadline bounds how long it waits.
func (s *Service) Events(ctx context.Context, from api.EventPosition, filter api.EventFilter, follow bool, send func(api.Event) error) error {
	for {
		wake := s.appliedChan()
		events, oldest, err := s.ledger.Events(from, eventPage)
		if err != nil {
			return fmt.Errorf("read events: %w", err)
		}
		// Checked on every page, not only the first: the log is trimmed and replaced under a
		// reader that is between pages.
		if len(events) > 0 && before(from, oldest) && (from.Index != 0 || from.Pos != 0) {
			if err := send(api.Event{Kind: api.EventReset, Index: oldest.Index, Pos: oldest.Pos}); err != nil {
				return err
			}
		}
		for _, e := range events {
			from = api.EventPosition{Index: e.Index, Pos: e.Pos}
			if !filter.Match(e) {
				continue
			}
			if err := send(e); err != nil {
				return err
			}
		}
		if len(events) == eventPage {
			continue
		}
		if !follow {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.closing:
			return ErrClosed
		case <-wake:
		}
	}
}

// before reports whether position a is before b (an event of b was not read after a).
func before(a, b api.EventPosition) bool {
	if a.Whole {
		return a.Index+1 < b.Index || a.Index+1 == b.Index && b.Pos > 0
	}
	return a.Index < b.Index || a.Index == b.Index && a.Pos+1 < b.Pos
}

// appliedChan is closed at the next applied batch.
func (s *Service) appliedChan() <-chan struct{} {
	s.appliedMu.Lock()
	defer s.appliedMu.Unlock()
	return s.applied
}

// noteApplied wakes the event readers.
func (s *Service) noteApplied() {
	s.appliedMu.Lock()
	close(s.applied)
	s.applied = make(chan struct{})
	s.appliedMu.Unlock()
}
