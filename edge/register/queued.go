// SPDX-License-Identifier: Apache-2.0

package register

import (
	"sync"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// DefaultResend is how long a node answered as queued is left out of an edge's registrations.
const DefaultResend = 10 * time.Minute

// Queued remembers the nodes an edge registered that the coordinators answered as waiting or
// leased, so its sweeps leave them out: a sighting changes nothing for such a node until a
// result does, and re-registering every unprovisioned node at every sweep was a Raft entry on
// every member for nothing (a large region's backlog, every interval).
//
// A node is sent again when any of these says a sighting may matter:
//   - the edge's report of a result for it was answered (Forget): the next sighting may
//     requeue it;
//   - a startup event names it (Found.Event): it booted again;
//   - the coordinators answered it final (provisioned within reprovision_after, deferred, ...)
//     or rejected it, or the call failed, or an older coordinator did not say (ListsFinal);
//   - Resend has passed since it was answered: another edge of the region may have finished it,
//     or an operator removed it from the ledger;
//   - until Resend has passed since a report of it was given up, or since an earlier run of the
//     edge left it unsettled (Unsure), at every sighting.
//
// Every method takes the caller's now, so the simulator drives it on its own clock.
type Queued struct {
	resend time.Duration

	mu    sync.Mutex
	nodes map[string]queuedEntry
	calls uint64 // the last Filter's call number
	purge int    // the size at which Filter next drops expired entries
}

// queuedEntry is one node's registration: in flight under call (non-zero), or answered queued at;
// or, with unsure set, a node sent at every sighting until then (Unsure).
type queuedEntry struct {
	at     time.Time
	call   uint64
	unsure time.Time
}

// unsureAt is e's unsure time while it lasts at now, else zero.
func (e queuedEntry) unsureAt(now time.Time) time.Time {
	if now.Before(e.unsure) {
		return e.unsure
	}
	return time.Time{}
}

// NewQueued remembers answers for resend (DefaultResend when resend <= 0).
func NewQueued(resend time.Duration) *Queued {
	if resend <= 0 {
		resend = DefaultResend
	}
	return &Queued{resend: resend, nodes: map[string]queuedEntry{}, purge: 1024}
}

// Filter returns the sightings to register now and answered, which records their call's answer:
// the coordinators' response, or nil when the call failed (nothing is known of them then).
func (q *Queued) Filter(now time.Time, found []Found) (send []Found, answered func(*api.RegisterResponse)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.calls++
	call := q.calls
	if len(q.nodes) >= q.purge {
		for id, e := range q.nodes {
			if e.call == 0 && e.unsureAt(now).IsZero() && now.Sub(e.at) >= q.resend {
				delete(q.nodes, id)
			}
		}
		q.purge = max(1024, 2*len(q.nodes))
	}
	var ids []string
	for _, f := range found {
		e, ok := q.nodes[f.Identity]
		unsure := e.unsureAt(now)
		if ok && e.call == 0 && unsure.IsZero() && !f.Event && now.Sub(e.at) < q.resend {
			continue
		}
		q.nodes[f.Identity] = queuedEntry{call: call, unsure: unsure}
		send = append(send, f)
		ids = append(ids, f.Identity)
	}
	return send, func(resp *api.RegisterResponse) { q.answered(call, now, ids, resp) }
}

// answered records the answer to call, sent at sent for ids; resp nil is a failed call.
func (q *Queued) answered(call uint64, sent time.Time, ids []string, resp *api.RegisterResponse) {
	var again map[string]bool
	if resp != nil {
		again = make(map[string]bool, len(resp.Final)+len(resp.Rejected))
		for _, id := range resp.Final {
			again[id] = true
		}
		for _, r := range resp.Rejected {
			again[r.Identity] = true
		}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, id := range ids {
		e, ok := q.nodes[id]
		if !ok || e.call != call {
			continue // forgotten meanwhile, or sent again by a later call
		}
		if !e.unsure.IsZero() {
			q.nodes[id] = queuedEntry{unsure: e.unsure}
			continue
		}
		if resp == nil || !resp.ListsFinal || again[id] {
			delete(q.nodes, id)
			continue
		}
		q.nodes[id] = queuedEntry{at: sent}
	}
}

// Forget sends ids again at their next sighting: the edge's report of a result for them was
// answered. Nodes Unsure stay so.
func (q *Queued) Forget(ids ...string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, id := range ids {
		if e, ok := q.nodes[id]; ok && e.unsure.IsZero() {
			delete(q.nodes, id)
		}
	}
}

// Unsure sends ids at every sighting until Resend after now: a report of them was given up, and
// may still be applied (a message held by the network), which would change what an answer of
// waiting or leased meant without the edge hearing of it.
func (q *Queued) Unsure(now time.Time, ids ...string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, id := range ids {
		q.nodes[id] = queuedEntry{call: q.nodes[id].call, unsure: now.Add(q.resend)}
	}
}

// Len is how many nodes it remembers, answered or in flight.
func (q *Queued) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.nodes)
}
