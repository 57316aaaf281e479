// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"fmt"
	"runtime/debug"
)

// A task is a member's request handler (or leadership step) run as a coroutine on its own
// goroutine, because the real lease manager blocks in propose until the entry commits. The loop
// and the tasks hand control to each other over Sim.yield, so exactly one of them runs at a
// time and the run stays deterministic: a task runs until it finishes or parks in propose, and
// the commit that resumes it is an event like any other.

// outcome is what a parked proposal is resumed with: the ledger's result, or why it failed.
type outcome struct {
	res any
	err error
}

// task runs fn until it finishes or parks on a proposal. Tasks run on a pool of goroutines
// that outlive them: a fresh goroutine per request spent a fifth of the run growing its stack
// into bbolt's and the manager's depth.
func (s *Sim) task(fn func()) {
	var w chan func()
	if n := len(s.idle); n > 0 {
		w, s.idle = s.idle[n-1], s.idle[:n-1]
	} else {
		w = make(chan func())
		go s.worker(w)
	}
	w <- fn
	<-s.yield
}

// worker runs tasks one after the other; it joins the idle pool before it yields, while the
// loop waits, so the pool needs no lock.
func (s *Sim) worker(w chan func()) {
	for fn := range w {
		s.runTask(fn)
		s.idle = append(s.idle, w)
		s.yield <- struct{}{}
	}
}

func (s *Sim) runTask(fn func()) {
	defer func() {
		if r := recover(); r != nil {
			s.fail(fmt.Errorf("member task panicked: %v\n%s", r, debug.Stack()))
		}
	}()
	fn()
}

// stopWorkers ends the idle workers' goroutines; call it when no task is parked.
func (s *Sim) stopWorkers() {
	for _, w := range s.idle {
		close(w)
	}
	s.idle = nil
}

// park is called on a task's goroutine: it gives control back to the loop until resume.
func (s *Sim) park(wake chan outcome) outcome {
	s.yield <- struct{}{}
	return <-wake
}

// resume hands o to the task parked on wake and waits until it finishes or parks again.
func (s *Sim) resume(wake chan outcome, o outcome) {
	wake <- o
	<-s.yield
}
