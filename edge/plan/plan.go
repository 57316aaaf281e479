// SPDX-License-Identifier: Apache-2.0

package plan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/seed96588659/muster/edge/helper"
	"github.com/seed96588659/muster/edge/upgrade"
	"github.com/seed96588659/muster/pkg/api"
)

// Settings are the site settings a plan follows.
type Settings struct {
	Site   string
	Region string
	// Edge is the edge's name, as a run would act.
	Edge    string
	Upgrade upgrade.Settings
	// Workers bounds the nodes read (and helper runs) at once.
	Workers int
	// Cluster is true when the configuration names coordinators.
	Cluster bool
}

// Helper answers for a node (helper.Runner).
type Helper interface {
	Run(ctx context.Context, req *helper.Request) (*helper.Response, error)
}

// Sweep is one discovery sweep (discovery.Discoverer.Sweep with no identities).
type Sweep func(ctx context.Context) ([]string, error)

// Deps are what a plan reads through; Sweep and Reader are required.
type Deps struct {
	Sweep  Sweep
	Reader *Reader
	// Helper, when set, is asked for every node that answered its inventory.
	Helper Helper
	// Ledger, when set, is read in cluster mode; NoLedger says why it is not.
	Ledger   *Ledger
	NoLedger string
	Now      func() time.Time
}

// Planner makes plans; it holds no lease source, journal or host flow, so it cannot act.
type Planner struct {
	s Settings
	d Deps
}

// New checks the settings and dependencies.
func New(s Settings, d Deps) (*Planner, error) {
	switch {
	case d.Sweep == nil:
		return nil, errors.New("plan: a discovery sweep is required")
	case d.Reader == nil:
		return nil, errors.New("plan: an inventory reader is required")
	case s.Workers < 1:
		return nil, fmt.Errorf("plan: Workers is %d, want at least 1", s.Workers)
	case s.Cluster && d.Ledger == nil && d.NoLedger == "":
		return nil, errors.New("plan: cluster mode needs a ledger reader, or the reason there is none")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Planner{s: s, d: d}, nil
}

// Plan sweeps once, reads every node found and says what a run would do with each.
func (p *Planner) Plan(ctx context.Context) (*Report, error) {
	r := &Report{Site: p.s.Site, Region: p.s.Region, Edge: p.s.Edge, Mode: ModeStandalone, At: p.d.Now().UTC(), HelperAsked: p.d.Helper != nil}
	ids, err := p.d.Sweep(ctx)
	var cut interface{ SweepCut() int }
	switch {
	case errors.As(err, &cut):
		r.Discovery = fmt.Sprintf("the sweep stopped at discovery_max_nodes (%d): a run would see the rest at later sweeps", cut.SweepCut())
	case err != nil:
		return nil, fmt.Errorf("discovery sweep: %w", err)
	}
	slices.Sort(ids)
	r.Nodes = p.readAll(ctx, ids)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("plan stopped: %w", ctx.Err())
	}
	if p.s.Cluster {
		r.Mode = ModeCluster
		p.cluster(ctx, r, ids)
	}
	r.Summary = summarize(r.Nodes)
	return r, nil
}

// readAll reads and decides every node, Workers at a time, in ids' order.
func (p *Planner) readAll(ctx context.Context, ids []string) []Node {
	out := make([]Node, len(ids))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(p.s.Workers, len(ids)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = decide(p.s.Upgrade, p.read(ctx, ids[i]))
			}
		}()
	}
	for i := range ids {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// read gathers one node's facts: its inventory, then the helper's answer on it.
func (p *Planner) read(ctx context.Context, id string) facts {
	f := facts{identity: id}
	f.inv, f.invErr = p.d.Reader.Inventory(ctx, id)
	if f.invErr != nil || p.d.Helper == nil {
		return f
	}
	f.asked = true
	// What the host flow sends, less what only choria_provision's locked actions give (jwt,
	// ed25519_pubkey, csr): a plan never asks for them.
	f.answer, f.helperErr = p.d.Helper.Run(ctx, &helper.Request{Identity: id, Inventory: string(f.inv.Raw)})
	return f
}

// cluster adds the ledger's view of every node, or why there is none.
func (p *Planner) cluster(ctx context.Context, r *Report, ids []string) {
	if p.d.Ledger == nil {
		r.Ledger = "not read: " + p.d.NoLedger
		return
	}
	held, err := p.d.Ledger.Of(ctx, ids)
	if err != nil {
		r.Ledger = "not read: " + api.Printable(err.Error())
		return
	}
	r.Ledger = "read"
	now := p.d.Now()
	for i := range r.Nodes {
		n := &r.Nodes[i]
		n.Cluster = view(held[n.Identity], p.s.Region, now)
		if !n.Cluster.Offered {
			n.Action, n.From, n.To = Skip, "", ""
			n.Reason = "the cluster would not offer it (its view below)"
		}
	}
}
