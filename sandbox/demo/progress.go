// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/seed96588659/muster/pkg/api"
)

// frame is one reading of everything the display shows: each region's edge metrics and the
// coordinators' status.
type frame struct {
	snaps   map[string]Snapshot // by region
	view    ClusterView
	viewErr error
}

// ledger is the count of region's nodes in state st, as the coordinators' status says.
func (f frame) ledger(region string, st api.NodeState) int64 {
	return int64(f.view.Regions[region][st])
}

// display draws, per region, bars of nodes discovered (the edge), leased and provisioned (the
// ledger) and failed (the edge), a line of the other states, and a line naming the leader. On a
// terminal it redraws in place; elsewhere it prints the whole block every few seconds, without
// cursor movement, so CI logs stay readable.
type display struct {
	p       *mpb.Progress
	bars    []*mpb.Bar // every bar and line, in display order
	specs   []barSpec  // the bars with a value, each with its bar
	refresh chan any   // nil on a terminal
	stop    chan struct{}
	wg      sync.WaitGroup

	mu    sync.Mutex
	cur   frame
	start time.Time
}

// barSpec is one bar: its name, how full it is and what it is out of.
type barSpec struct {
	name  string
	total int64
	value func(frame) int64
	bar   *mpb.Bar
}

// regionSize is a region's name and node count, for the bars' totals.
type regionSize struct {
	name  string
	nodes int
}

func newDisplay(out io.Writer, tty bool, regions []regionSize, start time.Time) *display {
	d := &display{start: start, stop: make(chan struct{})}
	opts := []mpb.ContainerOption{mpb.WithOutput(out), mpb.WithWidth(100)}
	if tty {
		opts = append(opts, mpb.ForceTTY(), mpb.WithRefreshRate(150*time.Millisecond))
	} else {
		d.refresh = make(chan any)
		opts = append(opts, mpb.WithManualRefresh(d.refresh))
	}
	d.p = mpb.New(opts...)
	for _, r := range regions {
		name, total := r.name, int64(r.nodes)
		specs := []barSpec{
			{name + " discovered", total, func(f frame) int64 { return f.snaps[name].Discovered }, nil},
			{name + " leased", total, func(f frame) int64 { return f.ledger(name, api.StateLeased) }, nil},
			{name + " provisioned", total, func(f frame) int64 { return f.ledger(name, api.StateProvisioned) }, nil},
			{name + " failed", total, func(f frame) int64 { return failedOutcomes(f.snaps[name]) }, nil},
		}
		for _, sp := range specs {
			// Built with total 0 and given their total afterwards, bars never complete on their
			// own: leased goes down as well as up, and counts can pass the total (a node found
			// again counts again).
			b := d.p.New(0, mpb.BarStyle().Lbound("[").Rbound("]"),
				mpb.BarWidth(50),
				mpb.PrependDecorators(decor.Name(sp.name, decor.WC{W: 16, C: decor.DindentRight})),
				mpb.AppendDecorators(decor.CountersNoUnit("%d / %d", decor.WC{W: 12})),
			)
			b.SetTotal(sp.total, false)
			sp.bar = b
			d.bars = append(d.bars, b)
			d.specs = append(d.specs, sp)
		}
		d.line(func() string { return d.regionLine(name) })
	}
	d.line(d.leaderLine)
	if d.refresh != nil {
		d.wg.Add(1)
		go d.tick()
	}
	return d
}

// line adds a text line that is redrawn with the bars.
func (d *display) line(text func() string) {
	b := d.p.New(0, mpb.NopStyle(), mpb.PrependDecorators(decor.Any(func(decor.Statistics) string { return text() })))
	d.bars = append(d.bars, b)
}

// failedOutcomes counts the edge's results that end a node's flow without provisioning it
// for a reason other than the helper's word.
func failedOutcomes(s Snapshot) int64 {
	return s.Outcomes["failed"] + s.Outcomes["lock_held"] + s.Outcomes["unknown"] + s.Outcomes["skipped"]
}

// update shows a new frame.
func (d *display) update(f frame) {
	d.mu.Lock()
	d.cur = f
	d.mu.Unlock()
	for _, sp := range d.specs {
		sp.bar.SetCurrent(sp.value(f))
	}
}

func (d *display) regionLine(region string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	f := d.cur
	s := f.snaps[region]
	return fmt.Sprintf("%-16s waiting %d, deferred %d, shut down %d, abandoned %d, gone %d; upgrades sent %d, in flight %d",
		"", f.ledger(region, api.StateWaiting), f.ledger(region, api.StateDeferred), f.ledger(region, api.StateShutdown),
		f.ledger(region, api.StateAbandoned), f.ledger(region, api.StateGone), s.Outcomes["upgrade_sent"], s.InFlight)
}

func (d *display) leaderLine() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	elapsed := time.Since(d.start).Round(100 * time.Millisecond)
	return fmt.Sprintf("%-16s %s, elapsed %s", "coordinators", describeView(d.cur.view, d.cur.viewErr), elapsed)
}

// describeView says who leads: "leader c2 (pid 123), term 3, 3 members".
func describeView(v ClusterView, err error) string {
	if err != nil {
		return "status unavailable: " + shorten(err.Error(), 60)
	}
	var b strings.Builder
	if v.Leader == "" {
		b.WriteString("no leader")
	} else {
		fmt.Fprintf(&b, "leader %s (pid %d)", v.Leader, v.LeaderPID)
	}
	fmt.Fprintf(&b, ", term %d, %d members", v.Term, v.Members)
	if v.Paused {
		b.WriteString(", PAUSED")
	}
	return b.String()
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// tick prints the block every refreshPeriod when the output is no terminal.
func (d *display) tick() {
	defer d.wg.Done()
	t := time.NewTicker(refreshPeriod)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
			select {
			case d.refresh <- time.Now():
			case <-d.stop:
				return
			}
		}
	}
}

// finish draws the last state and ends the display; the caller's output is free afterwards.
func (d *display) finish() {
	close(d.stop)
	d.wg.Wait()
	// Aborting without dropping keeps each bar as it stands (completing would fill it).
	for _, b := range d.bars {
		b.Abort(false)
	}
	d.p.Wait()
}
