// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/sandbox/fleet/audit"
	"github.com/seed96588659/muster/sandbox/fleet/recorder"
)

// Check is what the checker found after one round.
type Check struct {
	// DoubleProvisioned is the sandbox report's double_provisioned over the whole log.
	DoubleProvisioned []audit.Double
	// NotOnce are healthy nodes of the round not provisioned exactly once in it.
	NotOnce []Finding
	// Ledger are nodes whose ledger record is not final or disagrees with the fleet's own.
	Ledger []Finding
	// Lost are acknowledged results gone: the ledger recorded the node provisioned in this
	// round (its history says so) and no longer holds it, or a node provisioned in an earlier
	// round (a real one) is no longer provisioned.
	Lost []Finding
	// Unacknowledged are nodes the fleet shows provisioned whose result the ledger never
	// recorded: refused (the edge's lease was gone) or never delivered (the edge died first).
	// Nothing acknowledged was lost, but the ledger disagrees with the fleet.
	Unacknowledged []Finding
	// Stale are stale workers' late attempts that a node accepted.
	Stale []Finding
	// StaleRefused counts stale workers' late attempts that were refused.
	StaleRefused int
	// Paused are actions nodes received while the operator's pause stood.
	Paused []Finding
	// FaultErrors are faults that could not be injected or undone.
	FaultErrors []string
	// Lin is porcupine's check of the edges' calls to the coordinators in the round.
	Lin LinCheck
	// Ledgers is the comparison of every member's ledger fingerprint (fingerprint.go).
	Ledgers LedgerCheck
	Err     error
}

// Finding is one violation with its evidence.
type Finding struct {
	Node    string
	What    string
	Actions []recorder.Action
	Ledger  *api.Node
}

// OK reports whether the round passed.
func (c Check) OK() bool {
	return c.Err == nil && len(c.DoubleProvisioned) == 0 && len(c.NotOnce) == 0 && len(c.Ledger) == 0 && len(c.Unacknowledged) == 0 &&
		len(c.Lost) == 0 && len(c.Stale) == 0 && len(c.Paused) == 0 && len(c.FaultErrors) == 0 && !c.Lin.Failed() &&
		len(c.Ledgers.Diverged) == 0
}

// Summary is one line of counts.
func (c Check) Summary() string {
	if c.OK() {
		return fmt.Sprintf("checks passed (stale attempts refused: %d; edge call history %s; ledgers %s)", c.StaleRefused, c.Lin.Short(), c.Ledgers.Short())
	}
	return fmt.Sprintf("CHECKS FAILED: double %d, not once %d, ledger %d, lost %d, results never recorded %d, stale acted %d, acted while paused %d, fault errors %d, edge call history %s, ledgers %s, error %v",
		len(c.DoubleProvisioned), len(c.NotOnce), len(c.Ledger), len(c.Lost), len(c.Unacknowledged), len(c.Stale), len(c.Paused), len(c.FaultErrors), c.Lin.Short(), c.Ledgers.Short(), c.Err)
}

// Evidence prints every violation: node, callers, lease ids, tokens, times.
func (c Check) Evidence() string {
	var b strings.Builder
	if c.Err != nil {
		fmt.Fprintf(&b, "checker error: %v\n", c.Err)
	}
	for _, d := range c.DoubleProvisioned {
		fmt.Fprintf(&b, "DOUBLE PROVISIONED %s (region %s, episode %d) by %v\n", d.Node, d.Region, d.Episode, d.Callers)
		for _, a := range d.Evidence {
			fmt.Fprintf(&b, "    %s\n", actionLine(a))
		}
	}
	for _, group := range []struct {
		name string
		fs   []Finding
	}{{"NOT PROVISIONED EXACTLY ONCE", c.NotOnce}, {"LEDGER", c.Ledger}, {"LOST", c.Lost}, {"RESULT NEVER RECORDED, LEDGER DISAGREES WITH FLEET", c.Unacknowledged}, {"STALE WORKER ACTED", c.Stale}, {"ACTED WHILE PAUSED", c.Paused}} {
		for i, f := range group.fs {
			if i == 20 {
				fmt.Fprintf(&b, "%s: %d more\n", group.name, len(group.fs)-20)
				break
			}
			fmt.Fprintf(&b, "%s %s: %s\n", group.name, f.Node, f.What)
			for _, a := range f.Actions {
				fmt.Fprintf(&b, "    %s\n", actionLine(a))
			}
			if f.Ledger != nil {
				n := f.Ledger
				fmt.Fprintf(&b, "    ledger: state %s, edge %s, lease %s token %d, attempts %d, leased %s, finished %s, error %q\n",
					n.State, n.Edge, n.LeaseID, n.LeaseToken, n.Attempts, ts(n.LeasedAt), ts(n.FinishedAt), n.LastError)
				for _, t := range n.History {
					fmt.Fprintf(&b, "      %s %s -> %s edge %s lease %s token %d %s %s\n", ts(t.At), t.From, t.To, t.Edge, t.LeaseID, t.LeaseToken, t.Reason, t.Error)
				}
			}
		}
	}
	for _, e := range c.FaultErrors {
		fmt.Fprintf(&b, "FAULT: %s\n", e)
	}
	if len(c.Ledgers.Diverged) > 0 {
		fmt.Fprintf(&b, "LEDGERS DIVERGED: members that applied the same index hold different ledgers: %s\n", strings.Join(c.Ledgers.Diverged, "; "))
	}
	if c.Lin.Err != nil {
		fmt.Fprintf(&b, "EDGE CALL HISTORY NOT CHECKED: %v\n", c.Lin.Err)
	}
	if len(c.Lin.Illegal) > 0 {
		fmt.Fprintf(&b, "EDGE CALL HISTORY NOT LINEARIZABLE for %d nodes %v (visualization: %s)\n", len(c.Lin.Illegal), c.Lin.Illegal[:min(len(c.Lin.Illegal), 20)], c.Lin.Visualization)
		for _, e := range c.Lin.Evidence {
			b.WriteString(e)
		}
	}
	return b.String()
}

func ts(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("15:04:05.000000")
}

func actionLine(a recorder.Action) string {
	s := fmt.Sprintf("%s %s %s by %s ok=%v", ts(a.Time), a.Node, a.Action, a.Caller, a.OK)
	if a.Error != "" {
		s += " error=" + a.Error
	}
	return s
}

// check runs every check of a round.
func (r *Runner) check(ctx context.Context, res *RoundResult, nodes map[string]string) Check {
	var c Check
	for _, ev := range res.Events {
		if ev.Err != nil {
			c.FaultErrors = append(c.FaultErrors, ev.String())
		}
	}
	all, err := recorder.ReadFile(r.lab.ActionsFile())
	if err != nil {
		c.Err = err
		return c
	}
	c.DoubleProvisioned = audit.Build(all).DoubleProvisioned
	round, byNode := roundActions(all, res.Started)
	ledger, err := r.ledgerNodes(ctx)
	if err != nil {
		c.Err = err
		return c
	}
	rc := roundCheck{
		Runner: r, c: &c, res: res, rep: audit.Build(round), byNode: byNode, ledger: ledger,
		refused: r.refusedSince(res.Started),
		full:    r.withHistory(ctx, ledger), // each node's transitions, queried once
	}
	for _, id := range slices.Sorted(maps.Keys(nodes)) {
		rc.once(id)
		rc.recorded(id, nodes[id])
	}
	rc.realNodesStayProvisioned(nodes)
	c.Ledgers = r.checkLedgers(ctx)
	r.checkStale(&c, res, byNode, rc.full)
	r.checkPause(&c, res, round)
	// The evidence carries each node's transitions: leases, tokens, times.
	for _, fs := range [][]Finding{c.NotOnce, c.Ledger, c.Lost, c.Unacknowledged, c.Stale} {
		for i := range fs[:min(len(fs), 20)] {
			if fs[i].Ledger != nil {
				n := rc.full(fs[i].Node)
				fs[i].Ledger = &n
			}
		}
	}
	return c
}

// roundActions are the recorded actions from the round's start on, and the provisioning
// actions among them by node.
func roundActions(all []recorder.Action, started time.Time) ([]recorder.Action, map[string][]recorder.Action) {
	var round []recorder.Action
	byNode := map[string][]recorder.Action{}
	for _, a := range all {
		if !a.Time.Before(started) {
			round = append(round, a)
			if strings.HasPrefix(a.Action, "choria_provision#") {
				byNode[a.Node] = append(byNode[a.Node], a)
			}
		}
	}
	return round, byNode
}

// refusedSince are the results the coordinators refused an edge since the round started, by node.
func (r *Runner) refusedSince(started time.Time) map[string]*Refusal {
	refused := map[string]*Refusal{}
	for _, e := range r.edges {
		for _, rf := range readRefusals(e.Name, e.Proc.LogPath) {
			if rf.Time.Before(started) {
				continue
			}
			for _, n := range rf.Nodes {
				refused[n] = &rf
			}
		}
	}
	return refused
}

// roundCheck is what one round's per-node checks read, and the Check they fill.
type roundCheck struct {
	*Runner
	c       *Check
	res     *RoundResult
	rep     audit.Report
	byNode  map[string][]recorder.Action
	ledger  map[string]api.Node
	refused map[string]*Refusal
	full    func(string) api.Node
}

func (rc roundCheck) ledgerNode(id string) (api.Node, *api.Node, bool) {
	ln, ok := rc.ledger[id]
	if !ok {
		return ln, nil, false
	}
	return ln, &ln, true
}

// once: one accepted restart after an accepted configure. A configure whose restart never came
// (its lease was lost in between) and was redone by the same caller under a new lease is not a
// second provisioning; one by another caller is (the report's double check). When the node
// records its incarnation (emulated nodes), it is held to one provisioning per life instead: a
// node a re-entry fault brought back k times is provisioned k+1 times, once in each life, and
// any other node once (lifeCheck).
func (rc roundCheck) once(id string) {
	n, ok := rc.rep.Nodes[id]
	if acts := rc.byNode[id]; ok && recordsIncarnations(acts) {
		if what := lifeCheck(acts, 1+reentriesOf(rc.res.Events, id)); what != "" || !n.Provisioned {
			if what == "" {
				what = "its last life did not end provisioned"
			}
			_, lp, _ := rc.ledgerNode(id)
			rc.c.NotOnce = append(rc.c.NotOnce, Finding{Node: id, What: what, Actions: acts, Ledger: lp})
		}
		return
	}
	configured, restarted := 0, 0
	if ok {
		if a := n.Actions[audit.Configure]; a != nil {
			configured = a.OK
		}
		if a := n.Actions[audit.Restart]; a != nil {
			restarted = a.OK
		}
	}
	if !ok || !n.Provisioned || configured < 1 || restarted != 1 {
		_, lp, _ := rc.ledgerNode(id)
		rc.c.NotOnce = append(rc.c.NotOnce, Finding{Node: id, What: fmt.Sprintf("%d accepted configures, %d accepted restarts in the round", configured, restarted), Actions: rc.byNode[id], Ledger: lp})
	}
}

// recordsIncarnations reports whether every action says which life of the node it reached.
func recordsIncarnations(acts []recorder.Action) bool {
	return len(acts) > 0 && !slices.ContainsFunc(acts, func(a recorder.Action) bool { return a.Incarnation == 0 })
}

// reentriesOf is how often the round's re-entry faults brought node back.
func reentriesOf(events []*Event, node string) int {
	n := 0
	for _, ev := range events {
		n += ev.Reentries[node]
	}
	return n
}

// lifeCheck holds one node's provisioning actions of a round to want provisionings, at most one
// per life (incarnation): a life with two accepted restarts, or a count of provisioned lives
// other than want, is described; "" when they hold.
func lifeCheck(acts []recorder.Action, want int) string {
	type life struct{ configured, restarted int }
	lives := map[int]*life{}
	var order []int
	for _, a := range acts {
		l := lives[a.Incarnation]
		if l == nil {
			l = &life{}
			lives[a.Incarnation] = l
			order = append(order, a.Incarnation)
		}
		switch {
		case !a.OK:
		case a.Action == audit.Configure:
			l.configured++
		case a.Action == audit.Restart:
			l.restarted++
		}
	}
	provisioned, twice := 0, false
	var parts []string
	for _, inc := range order {
		l := lives[inc]
		if l.configured > 0 && l.restarted > 0 {
			provisioned++
		}
		twice = twice || l.restarted > 1
		parts = append(parts, fmt.Sprintf("life %d: %d/%d", inc, l.configured, l.restarted))
	}
	if !twice && provisioned == want {
		return ""
	}
	return fmt.Sprintf("%d lives provisioned in the round, want %d, at most once each (accepted configures/restarts: %s)", provisioned, want, strings.Join(parts, ", "))
}

// recorded: the ledger holds the node's final state, and it agrees with the fleet's record; a
// node the fleet shows provisioned and the ledger does not is lost or its result unacknowledged.
func (rc roundCheck) recorded(id, kind string) {
	c, acts := rc.c, rc.byNode[id]
	ln, lp, inLedger := rc.ledgerNode(id)
	fleet := rc.fleetProvisioned(kind, id)
	switch {
	case !inLedger:
		c.Ledger = append(c.Ledger, Finding{Node: id, What: "not in the ledger", Actions: acts})
	case ln.State != api.StateProvisioned && fleet:
		rc.unrecorded(id, ln)
	case ln.State == api.StateGone:
		c.Ledger = append(c.Ledger, Finding{Node: id, What: "ledger says gone (found out of provisioning mode), the fleet's record shows it never provisioned", Actions: acts, Ledger: lp})
	case !final(ln.State):
		c.Ledger = append(c.Ledger, Finding{Node: id, What: fmt.Sprintf("ledger state %s is not final", ln.State), Actions: acts, Ledger: lp})
	case (ln.State == api.StateProvisioned) != fleet:
		c.Ledger = append(c.Ledger, Finding{Node: id, What: fmt.Sprintf("ledger says %s, the fleet's record provisioned=%v", ln.State, fleet), Actions: acts, Ledger: lp})
	}
}

// unrecorded tells a node the fleet shows provisioned and the ledger does not: recorded once and
// lost since, refused, or never delivered.
func (rc roundCheck) unrecorded(id string, ln api.Node) {
	c, acts := rc.c, rc.byNode[id]
	hist := rc.full(id)
	fp := &hist
	if at, ok := recordedProvisioned(hist, rc.res.Started.Add(rc.res.StartOffset)); ok {
		c.Lost = append(c.Lost, Finding{Node: id, What: fmt.Sprintf("the ledger recorded it provisioned at %s (ledger time) and now says %s", ts(at), ln.State), Actions: acts, Ledger: fp})
	} else if rf := rc.refused[id]; rf != nil {
		c.Unacknowledged = append(c.Unacknowledged, Finding{Node: id, What: fmt.Sprintf("the fleet shows it provisioned, the ledger says %s: %s's result was refused at %s (lease %s token %s)", ln.State, rf.Edge, ts(rf.Time), rf.Lease, rf.Token), Actions: acts, Ledger: fp})
	} else {
		c.Unacknowledged = append(c.Unacknowledged, Finding{Node: id, What: fmt.Sprintf("the fleet shows it provisioned, the ledger says %s and never recorded the result (not delivered: the edge died or gave up first)", ln.State), Actions: acts, Ledger: fp})
	}
}

// realNodesStayProvisioned: nodes of earlier rounds that stay provisioned (real ones) must stay
// so in the ledger, through every leader change and cluster restart.
func (rc roundCheck) realNodesStayProvisioned(nodes map[string]string) {
	for _, reg := range rc.lab.Regions() {
		for _, id := range reg.RealNodes() {
			if _, inRound := nodes[id]; inRound {
				continue
			}
			if ln, ok := rc.ledger[id]; !ok || ln.State != api.StateProvisioned {
				lp := ln
				rc.c.Lost = append(rc.c.Lost, Finding{Node: id, What: fmt.Sprintf("provisioned in round 1, the ledger now says %q", ln.State), Ledger: &lp})
			}
		}
	}
}

// withHistory returns a lookup that fills a node's transitions from the ledger (the node list
// carries none), one query per node asked for.
func (r *Runner) withHistory(ctx context.Context, ledger map[string]api.Node) func(string) api.Node {
	cache := map[string]api.Node{}
	return func(id string) api.Node {
		if n, ok := cache[id]; ok {
			return n
		}
		n := ledger[id]
		qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if full, err := r.cluster.Admin().Node(qctx, id); err == nil {
			n = full
		}
		cancel()
		cache[id] = n
		return n
	}
}

// recordedProvisioned is the ledger time of a transition to provisioned at or after since.
func recordedProvisioned(n api.Node, since time.Time) (time.Time, bool) {
	for _, t := range n.History {
		if t.To == api.StateProvisioned && !t.At.Before(since) {
			return t.At, true
		}
	}
	return time.Time{}, false
}

func final(s api.NodeState) bool {
	switch s {
	case api.StateProvisioned, api.StateDeferred, api.StateShutdown, api.StateAbandoned, api.StateGone:
		return true
	}
	return false
}

// checkStale looks at every edge a fault took out past its lease (SIGSTOP, partition): an
// attempt it made after its leases ran out counts as stale unless it came under a lease the
// ledger granted it after the fault began. Accepted stale attempts are violations; refused
// ones are counted. Ledger times are converted with the offset read when the fault ended.
func (r *Runner) checkStale(c *Check, res *RoundResult, byNode map[string][]recorder.Action, ledger func(string) api.Node) {
	for _, ev := range res.Events {
		if ev.Edge == nil || (ev.Kind != EdgeStop && ev.Kind != EdgePartition) || ev.Err != nil {
			continue
		}
		expired := ev.Start.Add(r.opts.LeaseTTL)
		asked := r.calls.grantsSince(ev.Edge.Name, ev.Start)
		for node, acts := range byNode {
			for _, a := range acts {
				if a.Caller != ev.Edge.Caller() || a.Time.Before(expired) {
					continue
				}
				if slices.ContainsFunc(asked[node], func(at time.Time) bool { return !at.After(a.Time) }) {
					continue // under a lease the edge asked for after the fault began
				}
				ln := ledger(node)
				granted, ok := latestGrant(ln, ev.Edge.Name, a.Time.Add(ev.LedgerOffset))
				if ok && !granted.Add(-ev.LedgerOffset).Before(ev.Start) {
					continue // under a lease granted after the fault began
				}
				if !a.OK {
					c.StaleRefused++
					continue
				}
				lp := ln
				c.Stale = append(c.Stale, Finding{Node: node, What: fmt.Sprintf("%s by %s at %s, after its leases ran out (%s from %s, undone %s); latest grant to it before then %s",
					a.Action, a.Caller, ts(a.Time), ev.Kind, ts(ev.Start), ts(ev.End), ts(granted.Add(-ev.LedgerOffset))), Actions: acts, Ledger: &lp})
				break
			}
		}
	}
}

// latestGrant is the time (ledger clock) of the last grant of node to edge at or before t.
func latestGrant(n api.Node, edge string, t time.Time) (time.Time, bool) {
	var best time.Time
	found := false
	for _, tr := range n.History {
		if tr.To == api.StateLeased && tr.Edge == edge && !tr.At.After(t) && tr.At.After(best) {
			best, found = tr.At, true
		}
	}
	return best, found
}

// pauseSlack is how long after the pause was acknowledged an edge may still finish calls it
// had sent: edges learn the pause by heartbeat (250 ms) or renewal.
const pauseSlack = 2 * time.Second

// checkPause finds choria_provision actions nodes received while the operator's pause stood. An
// edge cut off from the coordinators before it could learn of the pause (a partition of the
// edge or of its datacenter, a SIGSTOP) learns it only once it is back: until then it finishes
// the hosts it holds leases for, as docs/cluster.md says, and checkStale holds those acts to
// their leases; its acts count from its return plus the slack.
func (r *Runner) checkPause(c *Check, res *RoundResult, round []recorder.Action) {
	for _, ev := range res.Events {
		if ev.Kind != OperatorPause || ev.Err != nil {
			continue
		}
		from := ev.Start.Add(pauseSlack)
		learns := map[string]time.Time{} // caller -> when a cut-off edge can know of the pause
		for _, cut := range res.Events {
			if !cutsOff(cut) || cut.Start.After(from) || cut.End.Before(ev.Start) {
				continue
			}
			if back := cut.End.Add(pauseSlack); back.After(learns[cut.Edge.Caller()]) {
				learns[cut.Edge.Caller()] = back
			}
		}
		seen := map[string]bool{}
		for _, a := range round {
			if !strings.HasPrefix(a.Action, "choria_provision#") || a.Time.Before(from) || a.Time.After(ev.End) || seen[a.Node] {
				continue
			}
			if back, ok := learns[a.Caller]; ok && a.Time.Before(back) {
				continue
			}
			seen[a.Node] = true
			c.Paused = append(c.Paused, Finding{Node: a.Node, What: fmt.Sprintf("%s by %s at %s while paused (%s to %s)", a.Action, a.Caller, ts(a.Time), ts(ev.Start), ts(ev.End)), Actions: []recorder.Action{a}})
		}
	}
}

// cutsOff reports whether ev kept an edge from hearing the coordinators.
func cutsOff(ev *Event) bool {
	switch ev.Kind {
	case EdgePartition, EdgeStop, DCPartition:
		return ev.Edge != nil && ev.Err == nil
	}
	return false
}

// stalls measures, for each leader SIGKILL, the longest time after it during which no node
// accepted a configure or restart while the round still had work: the provisioning rate at zero.
func stalls(res *RoundResult, all []recorder.Action) []time.Duration {
	out, _ := stallGaps(res, all)
	return out
}

// stallGaps is stalls with the time each longest gap ended.
func stallGaps(res *RoundResult, all []recorder.Action) ([]time.Duration, []time.Time) {
	var out []time.Duration
	var ends []time.Time
	var times []time.Time
	for _, a := range all {
		if a.OK && (a.Action == audit.Configure || a.Action == audit.Restart) && !a.Time.Before(res.Started) {
			times = append(times, a.Time)
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	if len(times) == 0 {
		return nil, nil
	}
	last := times[len(times)-1]
	for _, ev := range res.Events {
		if ev.Kind != LeaderKill || ev.Err != nil || ev.Start.After(last) {
			continue
		}
		// The window: 20s from the kill, and never past the round's last provisioning.
		end := ev.Start.Add(20 * time.Second)
		prev, worst, worstEnd := ev.Start, time.Duration(0), ev.Start
		for _, t := range times {
			if !t.After(ev.Start) {
				continue
			}
			if t.After(end) {
				break
			}
			if t.Sub(prev) > worst {
				worst, worstEnd = t.Sub(prev), t
			}
			prev = t
		}
		out = append(out, worst)
		ends = append(ends, worstEnd)
	}
	return out, ends
}

// stallEvidence names the nodes whose provisioning ended a long stall, with their ledger
// history (lease ids, tokens, grant times), so a slow failover can be traced to its leases.
func (r *Runner) stallEvidence(ctx context.Context, res *RoundResult, all []recorder.Action, limit time.Duration) string {
	gaps, ends := stallGaps(res, all)
	var b strings.Builder
	for i, g := range gaps {
		if g <= limit {
			continue
		}
		var nodes []string
		for _, a := range all {
			if a.OK && a.Action == audit.Configure && !a.Time.Before(ends[i]) && a.Time.Before(ends[i].Add(time.Second)) && len(nodes) < 4 {
				nodes = append(nodes, a.Node)
			}
		}
		ledger, err := r.ledgerNodes(ctx)
		if err != nil {
			return err.Error()
		}
		full := r.withHistory(ctx, ledger)
		fmt.Fprintf(&b, "  stall of %s after the leader SIGKILL ended at %s by:\n", g.Round(time.Millisecond), ts(ends[i]))
		for _, id := range nodes {
			n := full(id)
			fmt.Fprintf(&b, "    %s: state %s attempts %d\n", id, n.State, n.Attempts)
			for _, t := range n.History {
				if t.At.Add(time.Minute).Before(res.Started.Add(res.StartOffset)) {
					continue
				}
				fmt.Fprintf(&b, "      %s (ledger time) %s -> %s edge %s lease %s token %d %s %s\n", ts(t.At), t.From, t.To, t.Edge, t.LeaseID, t.LeaseToken, t.Reason, t.Error)
			}
		}
	}
	return b.String()
}
