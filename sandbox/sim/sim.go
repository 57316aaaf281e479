// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"time"

	"github.com/seed96588659/muster/sandbox/stack/wan"
)

// Options choose one run of the simulator.
type Options struct {
	// Seed decides everything that happens in the run: the same seed replays the same run.
	Seed uint64
	// Trace keeps every event of the run, for printing when an invariant breaks.
	Trace bool
	// Duration is the simulated time faults are injected in; zero means DefaultDuration.
	Duration time.Duration
	// Dir holds the members' ledger files; empty means a new temporary directory, removed after.
	Dir string
	// KeepGoing records the first violation of each invariant and runs to the end, instead of
	// stopping at the first: it measures which defects a sweep finds.
	KeepGoing bool
	// Profile places members and edges in datacenters (profile.go); empty is lan.
	Profile Profile
	// Protocol, when set, is the cluster protocol every member announces at the start; they are
	// then upgraded one at a time to ledger.Protocol (protocol.go). Zero: mixedShare of the
	// seeds do so, from OldestMixed or the previous protocol.
	Protocol int
	// Faults, when set, are the only fault kinds the seed injects, and it injects each of them.
	Faults []string
	// WipedVotes is the old rule: a member without raft state rejoins as the voter it was and
	// votes for any candidate (raft.go), which the checker must catch.
	WipedVotes bool
	// NoRecoverHold leaves out the hold of grants after a recover (fault_recover.go), which the
	// checker must catch.
	NoRecoverHold bool
	// Policies turns the approval policies on, and gives a twin, in every seed (approval.go),
	// not in some of them.
	Policies bool
	// DupAsFailure makes edges report a second responder as a plain failure, as the builds
	// before the held queue did: the node is offered again without an approve, which the checker
	// must catch. It also gives every seed a twin.
	DupAsFailure bool
}

// DefaultDuration is the simulated time of a run, before the quiet end that lets it settle.
const DefaultDuration = 10 * time.Minute

// settle is the quiet time at the end of a run: faults healed, every edge awake, so late
// reports and renewals land before the final checks.
const settle = 3 * time.Minute

// Result is what one run found.
type Result struct {
	Seed uint64
	// Violation is the first invariant that broke, nil when all held.
	Violation *Violation
	// Violations is, with KeepGoing, the first violation of each invariant that broke.
	Violations []*Violation
	// Trace is every event in real time order when Options.Trace was set.
	Trace []Line
	// Faults names the fault kinds this seed injected.
	Faults []string
	// Stats counts what happened, to show a run did something.
	Stats Stats
	// Protocol is the cluster protocol the leader's ledger (or the first running member's)
	// holds at the end.
	Protocol int
}

// Stats counts the protocol's work in one run.
type Stats struct {
	Events, Entries, Grants, Renewals, Reports, Acts, LeaderChanges int
	// LateTakeovers counts late results that took a node out of another live lease.
	LateTakeovers int
	// Carried counts the Reports answered inside an acquire's answer (carry.go).
	Carried int
	// Wipes counts members that lost their disk, ConfChanges the configuration changes, Lost the
	// committed entries a recover (or a wrong election) lost, Recovers the recovers.
	Wipes, ConfChanges, Lost, Recovers int
	// Holds counts the nodes committed entries held, Approvals those an approve sent back.
	Holds, Approvals int
}

// Sim is one seeded run: every process, the network and the checker, driven by one event loop.
type Sim struct {
	opts    Options
	rng     *rand.Rand
	now     int64 // real time: nanoseconds since the run began
	end     int64
	q       events
	seq     uint64
	dir     string
	tracing bool
	trace   []Line
	// yield hands control between the loop and a member task (see task.go): exactly one of them
	// runs at a time.
	yield chan struct{}
	idle  []chan func()

	members []*member
	edges   []*edge
	op      *operator
	appr    *approvals
	nodes   []*node
	regions []string
	world   world
	net     *network
	raft    raftState
	check   *checker
	faults  []string
	// changing is set while a membership fault's first steps run (settledConfig).
	changing bool
	stats    Stats
	fatal    error // the simulator itself failed (I/O, a panic): not a finding about the protocol
}

// Run simulates one seed and checks every invariant after every step.
func Run(opts Options) (Result, error) {
	if opts.Duration <= 0 {
		opts.Duration = DefaultDuration
	}
	if opts.Profile == "" {
		opts.Profile = wan.LAN
	}
	dir := opts.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "muster-sim-*")
		if err != nil {
			return Result{}, fmt.Errorf("sim seed %d: %w", opts.Seed, err)
		}
		defer os.RemoveAll(d)
		dir = d
	}
	s := &Sim{
		opts: opts, rng: rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)),
		dir: dir, tracing: opts.Trace, yield: make(chan struct{}),
	}
	s.end = int64(opts.Duration)
	s.check = newChecker(s)
	if err := s.build(); err != nil {
		s.close()
		return Result{}, fmt.Errorf("sim seed %d: %w", opts.Seed, err)
	}
	s.loop(s.end)
	if s.fatal == nil && s.check.violation == nil {
		s.quiet()
		s.loop(s.end + int64(settle))
		if s.fatal == nil && s.check.violation == nil {
			s.check.final()
		}
	}
	protocol := s.clusterProtocol()
	s.close()
	res := Result{Seed: opts.Seed, Violation: s.check.violation, Violations: s.check.found, Trace: s.trace, Faults: s.faults, Stats: s.stats, Protocol: protocol}
	if opts.KeepGoing && len(res.Violations) > 0 {
		res.Violation = res.Violations[0]
	}
	if s.fatal != nil {
		return res, fmt.Errorf("sim seed %d at %s: %w", opts.Seed, fmtTime(s.now), s.fatal)
	}
	return res, nil
}

// loop runs events in time order until until, a violation, or a failure of the simulator.
func (s *Sim) loop(until int64) {
	for s.q.Len() > 0 && s.check.violation == nil && s.fatal == nil {
		if s.q[0].at > until {
			return
		}
		ev := heap.Pop(&s.q).(*event)
		s.now = ev.at
		s.stats.Events++
		s.safely(ev.fn)
		s.check.due()
	}
}

// quiet ends the faults: partitions heal, stopped edges wake, dead processes come back, and no
// new fault starts; the protocol then runs on for the settle time.
func (s *Sim) quiet() {
	s.tracef(nil, "sim", "quiet: faults end, the run settles for %s", settle)
	s.check.quietAt = s.now
	s.net.healAll()
	for _, e := range s.edges {
		e.wake()
		if !e.alive {
			e.restart()
		}
	}
	for _, m := range s.members {
		m.wallSteps = false
		if !m.alive {
			m.restart()
		}
	}
	s.raft.changed(s)
}

// close fails every proposal still waiting, so its task ends, and closes the ledgers.
func (s *Sim) close() {
	for _, m := range s.members {
		m.failPending(errClosed)
	}
	for _, m := range s.members {
		m.shutdown()
	}
	s.stopWorkers()
}

// event is one thing that happens at a moment of real time; seq orders events of one moment in
// the order they were scheduled.
type event struct {
	at  int64
	seq uint64
	fn  func()
}

type events []*event

func (q events) Len() int { return len(q) }
func (q events) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q events) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *events) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *events) Pop() any {
	old := *q
	ev := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return ev
}

// at schedules fn at real time t (never in the past).
func (s *Sim) at(t int64, fn func()) {
	s.seq++
	heap.Push(&s.q, &event{at: max(t, s.now), seq: s.seq, fn: fn})
}

// after schedules fn d from now.
func (s *Sim) after(d time.Duration, fn func()) { s.at(s.now+int64(d), fn) }

// between is a uniformly random duration in [lo, hi].
func (s *Sim) between(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(s.rng.Int64N(int64(hi-lo)+1))
}

// chance is true with probability p.
func (s *Sim) chance(p float64) bool { return s.rng.Float64() < p }

// pick is a uniformly random element of xs.
func pick[T any](s *Sim, xs []T) T { return xs[s.rng.IntN(len(xs))] }

// expo is an exponentially distributed duration of mean m, capped at 10 m.
func (s *Sim) expo(m time.Duration) time.Duration {
	return min(time.Duration(s.rng.ExpFloat64()*float64(m)), 10*m)
}

// safely runs one event; a panic (the ledger halts on a storage error) ends the run as a failure
// of the simulator rather than of the process.
func (s *Sim) safely(fn func()) {
	defer func() {
		if r := recover(); r != nil {
			s.fail(fmt.Errorf("panic: %v\n%s", r, debug.Stack()))
		}
	}()
	fn()
}

// fail records a failure of the simulator itself; the run stops.
func (s *Sim) fail(err error) {
	if s.fatal == nil {
		s.fatal = err
	}
}
