// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// Kind names a fault.
type Kind string

// The faults the chaos runner injects, each alone and mixed.
const (
	LeaderKill      Kind = "leader-sigkill"
	EdgeKill        Kind = "edge-sigkill"
	EdgePartition   Kind = "edge-partition"
	EdgeStop        Kind = "edge-sigstop"
	LeaderPartition Kind = "leader-partition"
	ClockStep       Kind = "clock-step"
	BrokerRestart   Kind = "broker-restart"
	ClusterRestart  Kind = "cluster-restart"
	OperatorPause   Kind = "operator-pause"
	DCPartition     Kind = "dc-partition"
	MemberWipe      Kind = "member-wipe"
	RollingUpgrade  Kind = "rolling-upgrade"
	// MemberDowngrade is drawn only when named (--faults or a plan): a follower restarted on
	// the previous build once the cluster runs this build's protocol, then upgraded again.
	MemberDowngrade Kind = "member-downgrade"
	// NodeRebuilt and NodeFlapping are drawn only when named: emulated nodes that come back in
	// provisioning mode after their provisioning (the fleet's rebuilt and flapping faults), to be
	// provisioned again in the same round (reentry.go).
	NodeRebuilt  Kind = "node-rebuilt"
	NodeFlapping Kind = "node-flapping"
)

// AllKinds lists every fault drawn by default, in the order single-fault rounds take them
// (rolling-upgrade, when drawn, goes first: singleOrder). dc-partition came tenth (after the
// 100-round runs of seeds 2026120201..03 and 20261203), member-wipe and rolling-upgrade after it:
// a seed of a run before them replays with --faults naming the ones it had.
var AllKinds = []Kind{LeaderKill, EdgeStop, EdgeKill, EdgePartition, LeaderPartition, ClockStep, BrokerRestart, ClusterRestart, OperatorPause, DCPartition, MemberWipe, RollingUpgrade}

// knownKinds are the faults --faults accepts: the drawn ones and those run only when named.
func knownKinds() []Kind {
	return append(append([]Kind(nil), AllKinds...), MemberDowngrade, NodeRebuilt, NodeFlapping)
}

// ParseKinds reads a comma-separated list of fault names.
func ParseKinds(s string) ([]Kind, error) {
	var out []Kind
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		ok := false
		for _, k := range knownKinds() {
			if string(k) == f {
				out = append(out, k)
				ok = true
			}
		}
		if !ok {
			return nil, fmt.Errorf("unknown fault %q (known: %s)", f, joinKinds(knownKinds()))
		}
	}
	return out, nil
}

func joinKinds(ks []Kind) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// coordinatorFault reports whether k acts on the coordinator cluster (such faults of one round
// run one after another, so each finds the cluster whole).
func coordinatorFault(k Kind) bool {
	switch k {
	case LeaderKill, LeaderPartition, ClockStep, ClusterRestart, OperatorPause, MemberWipe, RollingUpgrade, MemberDowngrade:
		return true
	}
	return false
}

// Event is one injected fault: what, on whom, when, and what the checker needs of it.
type Event struct {
	Round  int
	Kind   Kind
	Target string
	// Start is when the fault began (the signal, the partition); End when it was undone.
	Start, End time.Time
	// Progress is the fraction of the round's nodes configured when the fault began.
	Progress float64
	Detail   string
	// Edge is the edge an edge fault took out.
	Edge *Edge
	// LedgerOffset is ledger time minus this machine's wall clock, read right after End.
	LedgerOffset time.Duration
	// Reentries are the nodes a node-rebuilt or node-flapping fault took, each with how often
	// it comes back in provisioning mode: each time it is provisioned again (check.go).
	Reentries map[string]int
	Err       error
	// seq is the event's place among its round's, so two faults of one kind in a round (a plan
	// may name one twice) block under different names.
	seq int
}

// block names the proxy blocks of the event's link faults: each fault lifts its own only, so
// faults that overlap on a proxy do not end each other. Target must be set.
func (e *Event) block() string {
	return fmt.Sprintf("round %d fault %d %s on %s", e.Round, e.seq+1, e.Kind, e.Target)
}

func (e *Event) String() string {
	s := fmt.Sprintf("round %d %s on %s at %s (%.0f%% configured) for %s", e.Round, e.Kind, e.Target,
		e.Start.UTC().Format("15:04:05.000"), 100*e.Progress, e.End.Sub(e.Start).Round(time.Millisecond))
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Err != nil {
		s += fmt.Sprintf(" (error: %v)", e.Err)
	}
	return s
}

// injector runs faults against the running system.
type injector struct {
	r     *Runner
	coord sync.Mutex // one coordinator fault at a time

	edgesMu sync.Mutex
	busy    map[*Edge]bool
}

// pickEdge takes an edge no other fault of the round holds.
func (in *injector) pickEdge(rng *rand.Rand) *Edge {
	in.edgesMu.Lock()
	defer in.edgesMu.Unlock()
	var free []*Edge
	for _, e := range in.r.edges {
		if !in.busy[e] {
			free = append(free, e)
		}
	}
	if len(free) == 0 {
		return nil
	}
	e := free[rng.IntN(len(free))]
	in.busy[e] = true
	return e
}

// takeEdge waits until no other fault of the round holds e, then holds it.
func (in *injector) takeEdge(ctx context.Context, e *Edge) error {
	return waitFor(ctx, "edge "+e.Name+" free of other faults", in.r.opts.RoundTimeout, func() (bool, string) {
		in.edgesMu.Lock()
		defer in.edgesMu.Unlock()
		if in.busy[e] {
			return false, "held by another fault"
		}
		in.busy[e] = true
		return true, ""
	})
}

func (in *injector) releaseEdge(e *Edge) {
	in.edgesMu.Lock()
	delete(in.busy, e)
	in.edgesMu.Unlock()
}

// pastLease is how long an edge is kept out so its lease has run out on both sides.
func (in *injector) pastLease() time.Duration {
	o := in.r.opts
	return o.LeaseTTL + o.LeaseGrace + 2*time.Second
}

// inject runs one fault to its end (the system restored) and fills ev.
func (in *injector) inject(ctx context.Context, ev *Event, rng *rand.Rand) {
	switch ev.Kind {
	case LeaderKill:
		in.killLeader(ctx, ev)
	case EdgeKill, EdgePartition, EdgeStop:
		in.edgeFault(ctx, ev, rng)
	case LeaderPartition:
		in.isolateLeader(ctx, ev)
	case ClockStep:
		in.stepClock(ctx, ev, rng)
	case BrokerRestart:
		regions := in.r.lab.Regions()
		reg := regions[rng.IntN(len(regions))]
		ev.Target, ev.Start = "broker "+reg.Name(), time.Now()
		ev.Err = reg.RestartBroker(ctx, time.Second)
	case ClusterRestart:
		in.restartCluster(ctx, ev)
	case OperatorPause:
		in.pauseByOperator(ctx, ev)
	case DCPartition:
		in.partitionDC(ctx, ev, rng)
	case MemberWipe:
		in.wipeMember(ctx, ev, rng)
	case RollingUpgrade:
		in.rollingUpgrade(ctx, ev)
	case MemberDowngrade:
		in.downgradeMember(ctx, ev)
	case NodeRebuilt, NodeFlapping:
		in.reenterNodes(ctx, ev, rng)
	}
	if ev.End.IsZero() {
		ev.End = time.Now()
	}
}

// killLeader SIGKILLs the leader, notes its successor, and starts it again a second later.
func (in *injector) killLeader(ctx context.Context, ev *Event) {
	c := in.r.cluster
	leader, err := c.WaitLeader(ctx, len(c.Members), "")
	if err != nil {
		ev.Err = err
		return
	}
	ev.Target = leader.ID
	ev.Start = time.Now()
	if err := leader.Kill(); err != nil {
		ev.Err = err
		return
	}
	next, err := c.WaitLeader(ctx, len(c.Members), leader.ID)
	if err == nil {
		ev.Detail = fmt.Sprintf("new leader %s after %s", next.ID, time.Since(ev.Start).Round(time.Millisecond))
	}
	sleepCtx(ctx, time.Second)
	ev.Err = leader.Restart(ctx)
}

// isolateLeader cuts the leader's Raft links until another member leads, then two seconds more.
func (in *injector) isolateLeader(ctx context.Context, ev *Event) {
	c := in.r.cluster
	leader, err := c.WaitLeader(ctx, len(c.Members), "")
	if err != nil {
		ev.Err = err
		return
	}
	ev.Target, ev.Start = leader.ID, time.Now()
	block := ev.block()
	c.Isolate(block, leader)
	next, err := c.WaitLeader(ctx, len(c.Members), leader.ID)
	if err == nil {
		ev.Detail = fmt.Sprintf("new leader %s after %s", next.ID, time.Since(ev.Start).Round(time.Millisecond))
	} else {
		ev.Detail = "no new leader: " + err.Error()
	}
	sleepCtx(ctx, 2*time.Second)
	c.Lift(block)
}

// stepClock steps the wall clock of the leader, or of a follower that may lead next, forwards
// then backwards by up to 3m, then back to true.
func (in *injector) stepClock(ctx context.Context, ev *Event, rng *rand.Rand) {
	c := in.r.cluster
	m := c.Members[rng.IntN(len(c.Members))]
	if rng.IntN(2) == 0 {
		if l, err := c.WaitLeader(ctx, len(c.Members), ""); err == nil {
			m = l
		}
	}
	step := time.Duration(30+rng.IntN(150)) * time.Second
	if rng.IntN(2) == 0 {
		step = -step
	}
	ev.Target, ev.Start = m.ID, time.Now()
	ev.Detail = fmt.Sprintf("wall clock %+v, then %+v", step, -step)
	if err := c.StepClock(m, step); err != nil {
		ev.Err = err
		return
	}
	sleepCtx(ctx, 2*time.Second)
	if err := c.StepClock(m, -step); err != nil {
		ev.Err = err
		return
	}
	sleepCtx(ctx, 2*time.Second)
	ev.Err = c.StepClock(m, 0)
}

// restartCluster stops every member at once, starts them all again and waits for a leader.
func (in *injector) restartCluster(ctx context.Context, ev *Event) {
	c := in.r.cluster
	ev.Target, ev.Start = "all members", time.Now()
	var wg sync.WaitGroup
	for _, m := range c.Members {
		wg.Go(func() { _ = m.Stop() })
	}
	wg.Wait()
	errs := make([]error, len(c.Members))
	for i, m := range c.Members {
		wg.Go(func() { errs[i] = m.Restart(ctx) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			ev.Err = err
			return
		}
	}
	_, ev.Err = c.WaitLeader(ctx, len(c.Members), "")
}

// pauseByOperator pauses provisioning through the admin API for three seconds, then resumes.
func (in *injector) pauseByOperator(ctx context.Context, ev *Event) {
	c := in.r.cluster
	ev.Target = "cluster"
	admin := func(what string, call func(context.Context) error) error {
		return waitFor(ctx, what, 60*time.Second, func() (bool, string) {
			actx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if err := call(actx); err != nil {
				return false, err.Error()
			}
			return true, ""
		})
	}
	err := admin("operator pause", func(ctx context.Context) error {
		_, err := c.Admin().Pause(ctx, api.PauseRequest{Reason: "chaos"})
		return err
	})
	ev.Start = time.Now()
	if err != nil {
		ev.Err = err
		return
	}
	sleepCtx(ctx, 3*time.Second)
	ev.End = time.Now() // the pause check ends here: resuming starts the work again
	ev.Err = admin("operator resume", func(ctx context.Context) error {
		_, err := c.Admin().Resume(ctx)
		return err
	})
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// partitionDC cuts one datacenter from the others: a member and the edge next to it (as the 3dc
// profile places them, on any profile: edge j runs next to member j mod 3) keep talking to each
// other and to nothing else, past the edge's lease, then the network heals. The majority side
// goes on provisioning; the cut-off edge stops when its leases run out on its own count and
// resumes after the heal; the round's checks hold it to no double, no loss, no stale act.
func (in *injector) partitionDC(ctx context.Context, ev *Event, rng *rand.Rand) {
	c := in.r.cluster
	k := rng.IntN(len(c.Members))
	m := c.Members[k]
	var e *Edge
	if k < len(in.r.edges) {
		in.edgesMu.Lock()
		if cand := in.r.edges[k]; !in.busy[cand] {
			e = cand
			in.busy[e] = true
		}
		in.edgesMu.Unlock()
	}
	wasLeader := false
	if l, err := c.WaitLeader(ctx, len(c.Members), ""); err == nil {
		wasLeader = l.ID == m.ID
	}
	ev.Target, ev.Edge, ev.Start = "datacenter of "+m.ID, e, time.Now()
	if e != nil {
		defer in.releaseEdge(e)
	}
	block := ev.block()
	in.cutDC(block, m, e)
	detail := "member " + m.ID
	if e != nil {
		detail += " and edge " + e.Name
	}
	if wasLeader {
		if next, err := c.WaitLeader(ctx, len(c.Members), m.ID); err == nil {
			detail += fmt.Sprintf("; new leader %s after %s", next.ID, time.Since(ev.Start).Round(time.Millisecond))
		}
	}
	sleepCtx(ctx, in.pastLease())
	in.lift(block)
	ev.Detail = detail
}

// cutDC cuts m and the edge e next to it (nil: none) off from every other member and edge under
// the name block: the members' proxies (CutDC), the inside edge's to every member but m and the
// others' to m.
func (in *injector) cutDC(block string, m *Member, e *Edge) {
	inside := map[string]bool{m.ID: true}
	if e != nil {
		inside[e.Name] = true
	}
	in.r.cluster.CutDC(block, m, inside)
	for _, o := range in.r.edges {
		o.CutMembers(block, func(to *Member) bool { return (to == m) != (o == e) })
	}
}

// lift removes the block called block from every member's and edge's proxies, and no other.
func (in *injector) lift(block string) {
	in.r.cluster.Lift(block)
	for _, o := range in.r.edges {
		o.Lift(block)
	}
}

// edgeFault injects ev into one edge that no other fault holds, for the fault's time.
func (in *injector) edgeFault(ctx context.Context, ev *Event, rng *rand.Rand) {
	e := in.pickEdge(rng)
	if e == nil {
		ev.Err = fmt.Errorf("no edge free")
		return
	}
	defer in.releaseEdge(e)
	ev.Target, ev.Edge, ev.Start = e.Name, e, time.Now()
	switch ev.Kind {
	case EdgeKill:
		before := len(readReplays(e.Proc.LogPath))
		if err := e.Proc.Kill(); err != nil {
			ev.Err = err
			return
		}
		sleepCtx(ctx, 500*time.Millisecond)
		e.Restarts++
		if ev.Err = e.Start(ctx); ev.Err == nil {
			// Start returns after /readyz, which the edge answers once its journal was read.
			replays := readReplays(e.Proc.LogPath)
			n := 0
			if len(replays) > before {
				n = replays[len(replays)-1]
			}
			ev.Detail = fmt.Sprintf("restarted; its journal held %d calls sent and never reported", n)
		}
	case EdgePartition:
		block := ev.block()
		e.Partition(block)
		sleepCtx(ctx, in.pastLease())
		e.Lift(block)
		ev.Detail = fmt.Sprintf("%d connections cut or refused at its proxies", e.Refused())
	case EdgeStop:
		if err := e.Proc.Pause(); err != nil {
			ev.Err = err
			return
		}
		sleepCtx(ctx, in.pastLease())
		ev.Err = e.Proc.Continue()
	}
}
