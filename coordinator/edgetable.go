// SPDX-License-Identifier: Apache-2.0

package coordinator

import (
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultMaxEdges is how many edges' last heartbeats a leader keeps unless Config.MaxEdges says
// otherwise: far more than any fleet runs, far less than a caller can invent.
const DefaultMaxEdges = 1024

// edgeTableTTLs is how many lease TTLs an edge may stay silent before the leader forgets it
// (unless Config.EdgeExpiry says otherwise); a live edge is heard several times a second.
const edgeTableTTLs = 3

// EdgeSeen is the last heartbeat of one edge, kept in the leader's memory only.
type EdgeSeen struct {
	Region string
	At     time.Time
	// Leases is how many leases the edge said it holds: a count, not the list, so a heartbeat's
	// size does not decide the leader's.
	Leases int
}

// edgeTable is the leader's memory of the edges it heard heartbeats from. An unbound edge token
// may name any edge, so it keeps at most max names and forgets a name not heard for expiry.
type edgeTable struct {
	clock   Clock
	max     int
	expiry  time.Duration
	refused prometheus.Counter
	log     *slog.Logger

	mu    sync.Mutex
	seen  map[string]heard
	swept time.Duration // monotonic reading of the last sweep
	// warned is set by the first refusal since the last sweep, so a flood logs one line per sweep.
	warned bool
}

// heard is one edge's last heartbeat and the monotonic reading it arrived at.
type heard struct {
	EdgeSeen
	at time.Duration
}

func newEdgeTable(clock Clock, max int, expiry time.Duration, refused prometheus.Counter, log *slog.Logger) *edgeTable {
	return &edgeTable{clock: clock, max: max, expiry: expiry, refused: refused, log: log, seen: map[string]heard{}}
}

// record keeps e as name's last heartbeat. A new name is refused (false) while the table holds max
// names heard within expiry; it is counted, and logged once per sweep.
func (t *edgeTable) record(name string, e EdgeSeen) bool {
	now := t.clock.Monotonic()
	t.mu.Lock()
	defer t.mu.Unlock()
	if now-t.swept >= t.expiry/2 {
		t.sweep(now)
	}
	if _, known := t.seen[name]; !known && len(t.seen) >= t.max {
		t.refused.Inc()
		if !t.warned {
			t.warned = true
			t.log.Warn("heartbeats of a new edge name are answered but not recorded: the leader already keeps the most edges it keeps (an unbound edge token inventing names?)",
				"edge", name, "region", e.Region, "edges_kept", len(t.seen), "forgotten_after", t.expiry)
		}
		return false
	}
	t.seen[name] = heard{EdgeSeen: e, at: now}
	return true
}

// sweep forgets the names not heard within expiry.
func (t *edgeTable) sweep(now time.Duration) {
	for name, h := range t.seen {
		if now-h.at >= t.expiry {
			delete(t.seen, name)
		}
	}
	t.swept, t.warned = now, false
}

// snapshot copies the names heard within expiry.
func (t *edgeTable) snapshot() map[string]EdgeSeen {
	now := t.clock.Monotonic()
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]EdgeSeen, len(t.seen))
	for name, h := range t.seen {
		if now-h.at < t.expiry {
			out[name] = h.EdgeSeen
		}
	}
	return out
}

// clear forgets every edge: a new leader hears them afresh.
func (t *edgeTable) clear() {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.seen)
	t.warned = false
}
