// SPDX-License-Identifier: Apache-2.0

package lease

import "time"

// BatchFor is how long a lease's results may wait to be reported with more of its results.
// Every report is a Raft entry written on every member, and a lease's hosts start as workers
// free up and end a flow's time later, so a short wait would split a lease over several
// reports. A second covers a lease's spread, so most leases are reported once, by their last
// result, which goes at once with whatever of its lease waits. Nothing waits on it but the
// ledger's view of the node.
const BatchFor = time.Second

// BatchMax is how many results may wait over every lease before all of them are sent.
const BatchMax = 256

// Batches gathers results per lease until they are due to be reported: a lease's once the
// result of its last node was taken or once its first waited BatchFor, every lease's once
// BatchMax wait. It is plain data: the caller says what time it is and keeps it under its own
// lock, so the edge and the simulator's edges batch alike. R is the caller's result type.
type Batches[R any] struct {
	leases []*Held // with results waiting, in the order of their first
	wait   map[*Held]*waiting[R]
	taken  map[*Held]int // results taken so far of each lease whose last is not taken yet
	count  int
}

type waiting[R any] struct {
	results []R
	since   time.Time // when its first result was taken
}

// Batch is one lease's results due to be reported, in the order taken.
type Batch[R any] struct {
	Held    *Held
	Results []R
	// Alone is true when the batch must not wait for an acquire to carry it: BatchMax results
	// waited, the edge is stopping, or its lease lists no nodes (a replayed intent's, which may
	// name an edge or region this run's acquires do not: an acquire carries only its own).
	Alone bool
}

// Add takes one result of held at now and returns the batches it made due.
func (b *Batches[R]) Add(now time.Time, held *Held, r R) []Batch[R] {
	if b.wait == nil {
		b.wait, b.taken = map[*Held]*waiting[R]{}, map[*Held]int{}
	}
	w := b.wait[held]
	if w == nil {
		w = &waiting[R]{since: now}
		b.wait[held] = w
		b.leases = append(b.leases, held)
	}
	w.results = append(w.results, r)
	b.count++
	last := b.took(held)
	switch {
	case b.count >= BatchMax:
		return b.All()
	case last:
		return []Batch[R]{b.remove(held, false)}
	}
	return nil
}

// Withhold counts one result of held taken that is not reported, and returns its lease's
// waiting results if that was its last.
func (b *Batches[R]) Withhold(held *Held) []Batch[R] {
	if b.taken == nil {
		b.wait, b.taken = map[*Held]*waiting[R]{}, map[*Held]int{}
	}
	if b.took(held) && b.wait[held] != nil {
		return []Batch[R]{b.remove(held, false)}
	}
	return nil
}

// took counts one more result of held taken and reports whether that was its last. A lease
// listing no nodes never completes: its results go by age.
func (b *Batches[R]) took(held *Held) (last bool) {
	n := len(held.Lease().Nodes)
	if n == 0 {
		return false
	}
	b.taken[held]++
	if last = b.taken[held] >= n; last {
		delete(b.taken, held)
	}
	return last
}

// Due returns, oldest first, the batches of the leases whose first waiting result was taken
// more than BatchFor before now: a lease whose hosts span longer is reported in parts.
func (b *Batches[R]) Due(now time.Time) []Batch[R] {
	cutoff := now.Add(-BatchFor)
	var due []Batch[R]
	for _, held := range append([]*Held(nil), b.leases...) {
		if b.wait[held].since.Before(cutoff) {
			due = append(due, b.remove(held, false))
		}
	}
	return due
}

// All returns every waiting batch, oldest first, to be sent alone.
func (b *Batches[R]) All() []Batch[R] {
	all := make([]Batch[R], 0, len(b.leases))
	for len(b.leases) > 0 {
		all = append(all, b.remove(b.leases[0], true))
	}
	return all
}

// Len is how many results wait.
func (b *Batches[R]) Len() int { return b.count }

func (b *Batches[R]) remove(held *Held, alone bool) Batch[R] {
	w := b.wait[held]
	delete(b.wait, held)
	for i, h := range b.leases {
		if h == held {
			b.leases = append(b.leases[:i], b.leases[i+1:]...)
			break
		}
	}
	b.count -= len(w.results)
	return Batch[R]{Held: held, Results: w.results, Alone: alone || len(held.Lease().Nodes) == 0}
}
