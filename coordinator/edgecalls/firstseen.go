// SPDX-License-Identifier: Apache-2.0

package edgecalls

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// firstSeenLogEvery spaces the leader's lines about refused first-seen nodes: a rogue naming
// thousands of identities a minute gets one line a minute, not one per identity.
const firstSeenLogEvery = time.Minute

// capFirstSeen refuses the identities of nodes the ledger does not know once their region holds
// Options.MaxFirstSeen first-seen nodes (waiting, never leased, or held): anyone holding the
// provisioning.jwt may answer a discovery for identities it invents, and each registered one
// would stay in the ledger for good. Registers naming new identities hold registerMu until their
// proposals are applied (the returned unlock), so the count on the leader is exact. It returns
// the nodes to register and rejected with the refusals added.
func (c *Calls) capFirstSeen(region string, nodes []api.RegisterNode, rejected []api.RejectedResult) ([]api.RegisterNode, []api.RejectedResult, func(), error) {
	limit := c.o.MaxFirstSeen
	if limit <= 0 || len(nodes) == 0 {
		return nodes, rejected, func() {}, nil
	}
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		ids[i] = n.Identity
	}
	if unknown, err := c.m.Ledger().Unknown(ids); err != nil || len(unknown) == 0 {
		return nodes, rejected, func() {}, err
	}
	c.registerMu.Lock()
	unknown, err := c.m.Ledger().Unknown(ids)
	if err != nil {
		c.registerMu.Unlock()
		return nil, nil, nil, fmt.Errorf("register in %s: %w", region, err)
	}
	held, err := c.m.Ledger().FirstSeenWaiting(region, limit)
	if err != nil {
		c.registerMu.Unlock()
		return nil, nil, nil, fmt.Errorf("register in %s: count first-seen nodes: %w", region, err)
	}
	// Under approval.manual first-seen nodes wait held, not waiting: they count too, or invented
	// identities would fill the queue without bound. Every held node of the region counts (the
	// ledger counts them per state, a scan would tell the first-seen ones apart): a full queue
	// refuses new identities until an operator approves or bans.
	counts, err := c.m.Ledger().Counts()
	if err != nil {
		c.registerMu.Unlock()
		return nil, nil, nil, fmt.Errorf("register in %s: count held nodes: %w", region, err)
	}
	held += counts[region][api.StateHeld]
	room := limit - held
	if room >= len(unknown) {
		return nodes, rejected, c.registerMu.Unlock, nil
	}
	refuse := make(map[string]bool, len(unknown)-room)
	for _, id := range unknown[max(room, 0):] {
		refuse[id] = true
	}
	reason := fmt.Sprintf("region %s holds %d first-seen nodes (waiting, never leased, or held for approval), its cap (register.max_first_seen): not registered", region, limit)
	kept := nodes[:0:0]
	for _, n := range nodes {
		if refuse[n.Identity] {
			rejected = append(rejected, api.RejectedResult{Identity: n.Identity, Reason: reason})
			continue
		}
		kept = append(kept, n)
	}
	if c.o.FirstSeenRefused != nil {
		c.o.FirstSeenRefused(len(refuse))
	}
	c.firstSeen.refused(c.o.Logger, c.o.Monotonic(), region, limit, len(refuse))
	return kept, rejected, c.registerMu.Unlock, nil
}

// refusalLog says at most once per firstSeenLogEvery how many new identities the cap refused.
type refusalLog struct {
	mu      sync.Mutex
	last    time.Duration // monotonic time of the last line; zero before the first
	pending map[string]int
}

func (r *refusalLog) refused(log *slog.Logger, now time.Duration, region string, limit, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending == nil {
		r.pending = map[string]int{}
	}
	r.pending[region] += n
	if r.last != 0 && now-r.last < firstSeenLogEvery {
		return
	}
	r.last = max(now, 1)
	for reg, count := range r.pending {
		log.Warn("refused new identities: their region holds as many first-seen nodes as register.max_first_seen allows; an edge's later sweep registers them once those are leased",
			"region", reg, "cap", limit, "refused", count, "per", firstSeenLogEvery)
	}
	clear(r.pending)
}
