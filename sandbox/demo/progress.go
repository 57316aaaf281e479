// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// display draws one bar per state (discovered, in flight, provisioned, failed) and a line of the
// other outcomes. On a terminal it redraws in place; elsewhere it prints the whole block every
// few seconds, without cursor movement, so CI logs stay readable.
type display struct {
	p       *mpb.Progress
	bars    []*mpb.Bar
	refresh chan any // nil on a terminal
	stop    chan struct{}
	wg      sync.WaitGroup

	mu    sync.Mutex
	snap  Snapshot
	specs []barSpec
	start time.Time
}

// barSpec is one bar: its name, how full it is and what it is out of.
type barSpec struct {
	name  string
	total int64
	value func(Snapshot) int64
}

func newDisplay(out io.Writer, tty bool, nodes, workers int, start time.Time) *display {
	d := &display{start: start, stop: make(chan struct{})}
	opts := []mpb.ContainerOption{mpb.WithOutput(out), mpb.WithWidth(100)}
	if tty {
		opts = append(opts, mpb.ForceTTY(), mpb.WithRefreshRate(150*time.Millisecond))
	} else {
		d.refresh = make(chan any)
		opts = append(opts, mpb.WithManualRefresh(d.refresh))
	}
	d.p = mpb.New(opts...)
	specs := []barSpec{
		{"discovered", int64(nodes), func(s Snapshot) int64 { return s.Discovered }},
		{"in flight", int64(workers), func(s Snapshot) int64 { return s.InFlight }},
		{"provisioned", int64(nodes), func(s Snapshot) int64 { return s.Outcomes["provisioned"] }},
		{"failed", int64(nodes), func(s Snapshot) int64 { return failedOutcomes(s) }},
	}
	for _, sp := range specs {
		// Built with total 0 and given their total afterwards, bars never complete on their
		// own: the in-flight bar goes down as well as up, and counts can pass the total
		// (a node found again counts again).
		b := d.p.New(0, mpb.BarStyle().Lbound("[").Rbound("]"),
			mpb.BarWidth(50),
			mpb.PrependDecorators(decor.Name(sp.name, decor.WC{W: 12, C: decor.DindentRight})),
			mpb.AppendDecorators(decor.CountersNoUnit("%d / %d", decor.WC{W: 12})),
		)
		b.SetTotal(sp.total, false)
		d.bars = append(d.bars, b)
	}
	info := d.p.New(0, mpb.NopStyle(), mpb.PrependDecorators(decor.Any(func(decor.Statistics) string { return d.infoLine() })))
	d.bars = append(d.bars, info)
	if d.refresh != nil {
		d.wg.Add(1)
		go d.tick()
	}
	d.set(specs)
	return d
}

// failedOutcomes counts the edge's results that end a node's flow without provisioning it
// for a reason other than the helper's word.
func failedOutcomes(s Snapshot) int64 {
	return s.Outcomes["failed"] + s.Outcomes["lock_held"] + s.Outcomes["unknown"] + s.Outcomes["skipped"]
}

// set remembers the specs' value functions for update.
func (d *display) set(specs []barSpec) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.specs = specs
}

// update shows a new snapshot.
func (d *display) update(s Snapshot) {
	d.mu.Lock()
	d.snap = s
	specs := d.specs
	d.mu.Unlock()
	for i, sp := range specs {
		d.bars[i].SetCurrent(sp.value(s))
	}
}

func (d *display) infoLine() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.snap
	return fmt.Sprintf("%-12s upgrades sent %d, deferred %d, shut down %d, events %d, elapsed %s",
		"", s.Outcomes["upgrade_sent"], s.Outcomes["deferred"], s.Outcomes["shutdown"], s.EventDiscovered,
		time.Since(d.start).Round(100*time.Millisecond))
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
