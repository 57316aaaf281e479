// SPDX-License-Identifier: Apache-2.0

package lease

import (
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// ParkFor is how long a lease's results wait for an acquire to carry them before they are sent
// alone. A busy edge acquires several times a second; an idle one long-polls, and its results go
// alone after this.
const ParkFor = 500 * time.Millisecond

// Outbox holds reports parked for the next acquire to carry, oldest first. It is plain data: the
// caller says what time it is and keeps it under its own lock, so the edge and the simulator's
// edges park, carry and give up alike.
type Outbox[T any] struct {
	parked []parkedItem[T]
}

type parkedItem[T any] struct {
	item    T
	results int
	at      time.Time
}

// Park adds item, a report of results results, parked at now.
func (o *Outbox[T]) Park(now time.Time, item T, results int) {
	o.parked = append(o.parked, parkedItem[T]{item: item, results: results, at: now})
}

// Due removes and returns, oldest first, the items parked at or before cutoff (every one for
// the zero time): those to send alone.
func (o *Outbox[T]) Due(cutoff time.Time) []T {
	var due []T
	kept := o.parked[:0]
	for _, p := range o.parked {
		if cutoff.IsZero() || !p.at.After(cutoff) {
			due = append(due, p.item)
			continue
		}
		kept = append(kept, p)
	}
	clear(o.parked[len(kept):])
	o.parked = kept
	return due
}

// Take removes and returns, oldest first, what one acquire carries: at most
// api.MaxCarriedReports reports and api.MaxLeaseNodes results.
func (o *Outbox[T]) Take() []T {
	n, results := 0, 0
	for n < len(o.parked) && n < api.MaxCarriedReports && results+o.parked[n].results <= api.MaxLeaseNodes {
		results += o.parked[n].results
		n++
	}
	taken := make([]T, n)
	for i := range n {
		taken[i] = o.parked[i].item
	}
	rest := copy(o.parked, o.parked[n:])
	clear(o.parked[rest:])
	o.parked = o.parked[:rest]
	return taken
}

// Len is how many reports are parked.
func (o *Outbox[T]) Len() int { return len(o.parked) }
