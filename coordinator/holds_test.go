// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// holds is the property a double grant breaks, checked from the edges' side: for every node, the
// intervals of real time during which an edge may act on it never overlap between two leases. An
// edge may act on a lease's nodes from when it received an acknowledged acquire or renew (it
// knows them from that answer) until its send + the time the server held the request + the TTL
// the answer carries - the edge's margin, and on a node no longer once it sent that node's report.
type holds struct {
	margin time.Duration

	mu sync.Mutex
	// spans maps node -> lease token -> the interval its edge may act on the node.
	spans map[string]map[uint64]*span
	acks  int
	// conflicted lists the nodes check found two leases' intervals overlapping on.
	conflicted []string
}

type span struct {
	edge        string
	from, until time.Duration
	// released is when the edge sent the node's report; zero while it did not.
	released time.Duration
}

func newHolds(margin time.Duration) *holds {
	return &holds{margin: margin, spans: map[string]map[uint64]*span{}}
}

// acked records an acknowledged acquire or renew of l sent at real time sent and answered at
// received; held is the time the server says it held the request. The edge counts the lease
// from its send (sent + held + TTL), but acts on its nodes only from the answer that names them.
func (h *holds) acked(l *api.Lease, sent, received, held time.Duration) {
	until := sent + held + l.TTL.Std() - h.margin
	h.mu.Lock()
	defer h.mu.Unlock()
	h.acks++
	for _, n := range l.Nodes {
		byToken := h.spans[n]
		if byToken == nil {
			byToken = map[uint64]*span{}
			h.spans[n] = byToken
		}
		s := byToken[l.Token]
		if s == nil {
			byToken[l.Token] = &span{edge: l.Edge, from: received, until: until}
			continue
		}
		s.from, s.until = min(s.from, received), max(s.until, until)
	}
}

// released records that the edge of token sent the reports of nodes at real time at: it acts on
// them no more.
func (h *holds) released(token uint64, nodes []string, at time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, n := range nodes {
		if s := h.spans[n][token]; s != nil && (s.released == 0 || at < s.released) {
			s.released = at
		}
	}
}

// check fails t for every node two of whose leases' intervals overlap, and returns how many
// acknowledged calls it checked.
func (h *holds) check(t testing.TB) int {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	for node, byToken := range h.spans {
		type iv struct {
			token       uint64
			edge        string
			from, until time.Duration
		}
		var ivs []iv
		for token, s := range byToken {
			until := s.until
			if s.released != 0 && s.released < until {
				until = s.released
			}
			if until > s.from {
				ivs = append(ivs, iv{token, s.edge, s.from, until})
			}
		}
		slices.SortFunc(ivs, func(a, b iv) int { return int(a.from - b.from) })
		for i := 1; i < len(ivs); i++ {
			for _, prev := range ivs[:i] {
				if ivs[i].from < prev.until {
					if len(h.conflicted) == 0 || h.conflicted[len(h.conflicted)-1] != node {
						h.conflicted = append(h.conflicted, node)
					}
					t.Errorf("node %s: %s may act under token %d from %s to %s, but %s was answered it under token %d at %s",
						node, prev.edge, prev.token, prev.from, prev.until, ivs[i].edge, ivs[i].token, ivs[i].from)
				}
			}
		}
	}
	return h.acks
}

// String summarises the recorded intervals for a failure message.
func (h *holds) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return fmt.Sprintf("%d acknowledged calls over %d nodes", h.acks, len(h.spans))
}
