// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/seed96588659/muster/pkg/api"
	bolt "go.etcd.io/bbolt"
)

// EventMemory is how many events the event log keeps. Like the failure index it is ledger
// content (every member keeps the same events under the same keys), so a constant.
const EventMemory = 100000

// The event log lets operators follow the ledger (a CMDB feed, a chat channel) without polling:
// every node transition and operator action is appended under the Raft index of the command
// that made it and its position within that command, in the same transaction. Positions are
// the same on every member, so a reader resumes on any member, after a disconnect or a change
// of leader, from the last event id it saw. The log is bounded: a reader that falls further
// behind than EventMemory events is told so (Events' oldest) and should read nodes again.

// noteEvent appends e (Index and Pos set here) to the event log.
func (t *txn) noteEvent(e api.Event) error {
	protocol := readProtocol(t.meta)
	if protocol < eventsProtocol {
		return nil
	}
	e.Index, e.Pos = t.index, t.eventPos
	v, err := eventValue(&e, protocol)
	if err != nil {
		return fmt.Errorf("encode event of %s: %w", e.Identity, err)
	}
	t.eventPos++
	t.events++
	if err := t.eventLog.Put(logKey(e.Index, e.Pos), v); err != nil {
		return fmt.Errorf("store event of %s: %w", e.Identity, err)
	}
	return nil
}

// noteTransition records the transition n made from old, if it made one: its last history
// entry is new (a changed state, or an operator's entry such as a move).
func (t *txn) noteTransition(old, n *Node) error {
	if len(n.History) == 0 {
		return nil
	}
	tr := n.History[len(n.History)-1]
	if old != nil && len(old.History) > 0 && len(old.History) == len(n.History) && sameTransition(old.History[len(old.History)-1], tr) {
		return nil
	}
	return t.noteEvent(api.Event{Kind: api.EventTransition, At: tr.At, Identity: n.Identity, Region: n.Region,
		From: tr.From, To: tr.To, Reason: tr.Reason, Edge: tr.Edge, LeaseID: tr.LeaseID})
}

func sameTransition(a, b Transition) bool {
	return a.At.Equal(b.At) && a.From == b.From && a.To == b.To && a.Reason == b.Reason && a.LeaseID == b.LeaseID && a.LeaseToken == b.LeaseToken
}

// Events returns up to limit events after position from, and the position of the oldest event
// the log still holds (a reader whose from is before it missed some).
func (l *Ledger) Events(from api.EventPosition, limit int) (events []api.Event, oldest api.EventPosition, err error) {
	err = l.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketEvents).Cursor()
		if k, _ := c.First(); k != nil {
			oldest = api.EventPosition{Index: binary.BigEndian.Uint64(k[:8]), Pos: binary.BigEndian.Uint32(k[8:])}
		}
		start := logKey(from.Index, from.Pos)
		if from.Whole {
			start = logKey(from.Index+1, 0)
		}
		k, v := c.Seek(start)
		if k != nil && !from.Whole && (from.Index != 0 || from.Pos != 0) && bytes.Equal(k, start) {
			k, v = c.Next() // after the event named, not at it
		}
		for ; k != nil && len(events) < limit; k, v = c.Next() {
			e, err := decodeEvent(k, v)
			if err != nil {
				return fmt.Errorf("decode event %s: %w", describeFailureKey(k), err)
			}
			events = append(events, e)
		}
		return nil
	})
	return events, oldest, err
}
