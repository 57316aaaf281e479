// SPDX-License-Identifier: Apache-2.0

package edge

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/pkg/rpc"
)

// confirmer settles restarts, upgrades and shutdowns that got no reply. After such a request the
// agent answers nothing more until its process is replaced, so retrying cannot tell whether it
// was accepted; looking for the node again can. Once ConfirmAfter has passed, a node that still
// answers discovery in provisioning mode did not act on the request (failed); one that is gone
// did: it restarted into its configuration, left to upgrade, or shut down.
type confirmer struct {
	e    *Edge
	out  chan leased
	done chan struct{}

	mu      sync.Mutex
	waiting []due
	closed  bool
	wake    chan struct{}
}

type due struct {
	res leased
	at  time.Time
}

func newConfirmer(e *Edge) *confirmer {
	return &confirmer{e: e, out: make(chan leased, 1024), done: make(chan struct{}), wake: make(chan struct{}, 1)}
}

// add settles res once ConfirmAfter has passed, the restart splay and a process start, or at
// once when the unanswered call was the flow's first (nothing was sent that takes time to act).
func (c *confirmer) add(res leased) {
	wait := c.e.o.ConfirmAfter
	if !rpc.LeavesProvisioning(res.Step) {
		wait = 0
	}
	c.addAt(res, c.e.o.Now().Add(wait))
}

// addAt settles res by rediscovery at (on the edge's clock).
func (c *confirmer) addAt(res leased, at time.Time) {
	c.mu.Lock()
	c.waiting = append(c.waiting, due{res: res, at: at})
	c.mu.Unlock()
	c.poke()
}

// close lets the confirmer finish once everything waiting is settled.
func (c *confirmer) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.poke()
}

func (c *confirmer) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *confirmer) run() {
	defer close(c.done)
	for {
		c.mu.Lock()
		now := c.e.o.Now()
		var ready []due
		rest := c.waiting[:0]
		for _, d := range c.waiting {
			// Once the edge stops, nothing waits: what is not due yet is reported unconfirmed.
			if c.closed || !now.Before(d.at) {
				ready = append(ready, d)
			} else {
				rest = append(rest, d)
			}
		}
		c.waiting = rest
		closed, empty := c.closed, len(rest) == 0
		next := time.Second
		if !empty {
			next = max(rest[0].at.Sub(now), 10*time.Millisecond)
		}
		c.mu.Unlock()

		if len(ready) > 0 {
			c.settle(ready, closed)
			continue
		}
		if closed && empty {
			return
		}
		t := time.NewTimer(next)
		select {
		case <-t.C:
		case <-c.wake:
		}
		t.Stop()
	}
}

// sweepTries bounds the rediscoveries tried for one result before it is reported unconfirmed.
const sweepTries = 3

func (c *confirmer) settle(ready []due, stopping bool) {
	if stopping {
		for _, d := range ready {
			if d.res.replayed {
				// Its lease is a previous run's: a failure report would only be refused. The
				// intent stays open for the next run.
				continue
			}
			res := d.res
			res.Outcome = hostflow.Failed
			res.Err = fmt.Errorf("%s got no reply and the edge stopped before confirming it", res.Step)
			res.unsettled = true
			c.out <- res
		}
		return
	}
	ids := make([]string, len(ready))
	for i, d := range ready {
		ids[i] = d.res.Identity
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	present, err := c.e.o.Finder.Sweep(ctx, ids...)
	cancel()
	still := make(map[string]bool, len(present))
	for _, id := range present {
		still[id] = true
	}
	for _, d := range ready {
		res := d.res
		switch {
		case err != nil && res.sweeps+1 < sweepTries:
			// A broker that failed the sweep says nothing about the node: look again later.
			res.sweeps++
			c.e.m.confirms.WithLabelValues("error").Inc()
			c.addAt(res, c.e.o.Now().Add(c.e.o.ConfirmAfter))
			continue
		case err != nil:
			res.Outcome = hostflow.Failed
			res.Err = fmt.Errorf("%s got no reply and could not be confirmed by discovery (%d sweeps): %w", res.Step, sweepTries, err)
			// What the node did is still unknown: the intent stays open for the next run.
			res.unsettled = true
			c.e.m.confirms.WithLabelValues("error").Inc()
		case still[res.Identity]:
			res.Outcome = hostflow.Failed
			res.Err = fmt.Errorf("%s got no reply and the node is still in provisioning mode", res.Step)
			c.e.m.confirms.WithLabelValues("present").Inc()
		default:
			res.Outcome, res.Err = hostflow.Settled(res.Step), nil
			if res.Outcome == hostflow.Gone {
				res.Err = fmt.Errorf("%s got no reply and discovery no longer finds the node in provisioning mode", res.Step)
			}
			c.e.m.confirms.WithLabelValues("gone").Inc()
		}
		c.out <- res
	}
}
