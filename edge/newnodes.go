// SPDX-License-Identifier: Apache-2.0

package edge

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed96588659/muster/edge/register"
)

// Results of an identity this edge has not seen answer before (muster_edge_new_nodes_total).
const (
	newAdmitted    = "admitted"     // it answered its check and was handed on to register
	newUnanswered  = "unanswered"   // it did not answer its check
	newCheckFailed = "check_failed" // the check could not be sent
	newSweepLimit  = "sweep_limit"  // beyond NewPerSweep in one sweep: left for a later one
	newRateLimit   = "rate_limit"   // beyond the edge's NewRate
)

func newResults() []string {
	return []string{newAdmitted, newUnanswered, newCheckFailed, newSweepLimit, newRateLimit}
}

// newNodes takes in the identities discovery names that this edge has not seen answer before.
// The provisioning broker is open to anyone holding the provisioning.jwt every server image
// carries, so one client can answer a sweep, or announce startups, for any number of invented
// identities. Each costs here a place in a per-sweep bound, a token of the edge's rate and one
// short check (Options.Check); only those that answer are registered. Identities that answered
// are known, and go straight to register at every later sighting, ahead of new ones.
type newNodes struct {
	o       *Options
	known   *knownSet
	rate    *bucket
	checks  chan struct{} // checks in flight
	results *prometheus.CounterVec

	mu    sync.Mutex
	since map[string]int // refusals since the last summary, by result
}

func newNewNodes(o *Options, results *prometheus.CounterVec) *newNodes {
	return &newNodes{
		o: o, known: newKnownSet(o.KnownLimit), rate: newBucket(o.NewRate, o.NewBurst, o.Now()),
		checks: make(chan struct{}, o.CheckConcurrency), results: results, since: map[string]int{},
	}
}

// count records n identities ending with result.
func (g *newNodes) count(result string, n int) {
	if n <= 0 {
		return
	}
	g.results.WithLabelValues(result).Add(float64(n))
	if result == newAdmitted {
		return
	}
	g.mu.Lock()
	g.since[result] += n
	g.mu.Unlock()
}

// summary returns and resets the refusals counted since the last call: the edge logs them once
// per sweep, not once per identity.
func (g *newNodes) summary() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.since
	g.since = map[string]int{}
	return s
}

// split parts ids into those known and those new to this edge, each in the order given.
func (g *newNodes) split(ids []string) (known, fresh []string) {
	for _, id := range ids {
		if g.known.has(id) {
			known = append(known, id)
		} else {
			fresh = append(fresh, id)
		}
	}
	return known, fresh
}

// admitSweep bounds the new identities of one sweep by NewPerSweep, chosen at random when there
// are more (a rogue cannot win the places by the names it picks), then by the edge's rate. It
// returns those to check, in the order given.
func (g *newNodes) admitSweep(fresh []string) []string {
	if over := len(fresh) - g.o.NewPerSweep; over > 0 {
		idx := rand.Perm(len(fresh))[:g.o.NewPerSweep]
		slices.Sort(idx)
		chosen := make([]string, len(idx))
		for i, j := range idx {
			chosen[i] = fresh[j]
		}
		fresh = chosen
		g.count(newSweepLimit, over)
	}
	got := g.rate.take(g.o.Now(), len(fresh))
	g.count(newRateLimit, len(fresh)-got)
	return fresh[:got]
}

// admitEvent is true when a startup event's new identity gets a token of the edge's rate.
func (g *newNodes) admitEvent() bool {
	if g.rate.take(g.o.Now(), 1) == 1 {
		return true
	}
	g.count(newRateLimit, 1)
	return false
}

// deliverFunc hands on an identity that answered its check sent at asked; asked is zero without
// a check (the sighting is then the sweep's or the event's own).
type deliverFunc func(id string, asked time.Time)

// check runs the checks of ids, CheckConcurrency at a time, and hands those that answered to
// deliver in the order given, a round at a time: a sweep's nodes are registered in identity
// order (see sweep). A round waits at most CheckRound for its slowest: an identity that answers
// later is handed on alone when it does, so one that never answers (a rogue's invention, a dead
// node) holds the others of its round for CheckRound, not for the check's whole timeout.
// Without a check every identity is handed on at once.
func (g *newNodes) check(ctx context.Context, ids []string, deliver deliverFunc) {
	type answer struct {
		ok    bool
		asked time.Time
	}
	for len(ids) > 0 && ctx.Err() == nil {
		round := ids[:min(len(ids), g.o.CheckConcurrency)]
		ids = ids[len(round):]
		var mu sync.Mutex
		answers := make([]answer, len(round))
		handed := false // the round was handed on: a later answer goes alone
		var wg sync.WaitGroup
		for i, id := range round {
			if !g.start(ctx, id, &wg, func(_ string, asked time.Time) {
				mu.Lock()
				defer mu.Unlock()
				if handed {
					deliver(id, asked)
					return
				}
				answers[i] = answer{true, asked}
			}) {
				break
			}
		}
		g.awaitRound(ctx, &wg)
		mu.Lock()
		handed = true
		for i, a := range answers {
			if a.ok {
				deliver(round[i], a.asked)
			}
		}
		mu.Unlock()
	}
}

// awaitRound waits until every check of a round ended, CheckRound passed or ctx ended.
func (g *newNodes) awaitRound(ctx context.Context, wg *sync.WaitGroup) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	t := time.NewTimer(g.o.CheckRound)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	}
}

// start checks id in the background once a place among CheckConcurrency is free (it waits for
// one, so a flood of startup events is held back by the listener's bounds), tracked by wg; false
// when ctx ended first.
func (g *newNodes) start(ctx context.Context, id string, wg *sync.WaitGroup, deliver deliverFunc) bool {
	if g.o.Check == nil {
		g.known.add(id)
		g.count(newAdmitted, 1)
		deliver(id, time.Time{})
		return true
	}
	select {
	case g.checks <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer func() { <-g.checks }()
		asked := g.o.Now()
		ok, err := g.o.Check(ctx, id)
		switch {
		case ctx.Err() != nil:
		case err != nil:
			g.count(newCheckFailed, 1)
			g.o.Logger.Debug("could not check a new node", "node", id, "error", err)
		case !ok:
			g.count(newUnanswered, 1)
		default:
			g.known.add(id)
			g.count(newAdmitted, 1)
			deliver(id, asked)
		}
	}()
	return true
}

// checked is the sighting of a new identity that answered its check sent at asked: seen when it
// answered, and describing no moment before the check was sent.
func (g *newNodes) checked(id string, event bool, asked time.Time) register.Found {
	return register.Found{Identity: id, Event: event, At: g.o.Now(), Since: asked, FirstSeen: true}
}
