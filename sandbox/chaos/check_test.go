// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/sandbox/fleet/recorder"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func act(at time.Duration, node, action, caller string, ok bool) recorder.Action {
	return recorder.Action{Time: t0.Add(at), Region: "eu", Node: node, Action: action, Caller: caller, OK: ok}
}

// TestCheckStale_AcceptedLateAttemptIsAViolationRefusedOnesAreCounted builds the record of an
// edge SIGSTOPped at t0 for 9s with a 6s TTL: an accepted attempt at 10s under its old lease is
// stale, a refused one is counted, and one under a lease granted after the fault is fine.
func TestCheckStale_AcceptedLateAttemptIsAViolationRefusedOnesAreCounted(t *testing.T) {
	r := &Runner{opts: Options{LeaseTTL: 6 * time.Second}}
	e := &Edge{Name: "edge-eu-1.mcollective"}
	ev := &Event{Kind: EdgeStop, Edge: e, Start: t0, End: t0.Add(9 * time.Second), LedgerOffset: 30 * time.Second}
	res := &RoundResult{Events: []*Event{ev}}
	caller := e.Caller()
	byNode := map[string][]recorder.Action{
		"old":     {act(10*time.Second, "old", "choria_provision#configure", caller, true)},
		"refused": {act(10*time.Second, "refused", "choria_provision#configure", caller, false)},
		"new":     {act(11*time.Second, "new", "choria_provision#configure", caller, true)},
		"early":   {act(-time.Second, "early", "choria_provision#configure", caller, true)},
	}
	// Ledger times run 30s ahead of this machine's (a stepped clock moved ledger time).
	grant := func(at time.Duration) api.Node {
		return api.Node{History: []api.Transition{{At: t0.Add(at + 30*time.Second), To: api.StateLeased, Edge: e.Name, LeaseID: "l", LeaseToken: 7}}}
	}
	ledger := map[string]api.Node{"old": grant(-2 * time.Second), "refused": grant(-2 * time.Second), "new": grant(10 * time.Second), "early": grant(-3 * time.Second)}
	var c Check
	r.checkStale(&c, res, byNode, func(id string) api.Node { return ledger[id] })
	if len(c.Stale) != 1 || c.Stale[0].Node != "old" {
		t.Fatalf("stale findings %+v, want only node old", c.Stale)
	}
	if c.StaleRefused != 1 {
		t.Errorf("refused %d, want 1", c.StaleRefused)
	}
	if c.OK() {
		t.Error("a round with a stale accepted attempt passed")
	}
	if ev := c.Evidence(); !strings.Contains(ev, "STALE WORKER ACTED old") || !strings.Contains(ev, "token 7") {
		t.Errorf("evidence lacks the node or its lease token:\n%s", ev)
	}
}

func TestCheckPause_ActionsWhilePausedAreFlagged(t *testing.T) {
	r := &Runner{}
	ev := &Event{Kind: OperatorPause, Start: t0, End: t0.Add(3 * time.Second)}
	res := &RoundResult{Events: []*Event{ev}}
	round := []recorder.Action{
		act(time.Second, "inflight", "choria_provision#configure", "choria=e", true), // within the slack
		act(2500*time.Millisecond, "late", "choria_provision#jwt", "choria=e", true),
		act(2600*time.Millisecond, "inv", "rpcutil#inventory", "choria=e", true), // not a provisioning action
		act(4*time.Second, "after", "choria_provision#jwt", "choria=e", true),
	}
	var c Check
	r.checkPause(&c, res, round)
	if len(c.Paused) != 1 || c.Paused[0].Node != "late" {
		t.Fatalf("paused findings %+v, want only node late", c.Paused)
	}
}

func TestStalls_LongestGapAfterTheKill(t *testing.T) {
	res := &RoundResult{Started: t0, Events: []*Event{{Kind: LeaderKill, Start: t0.Add(10 * time.Second)}}}
	var all []recorder.Action
	for _, at := range []time.Duration{9 * time.Second, 10200 * time.Millisecond, 11900 * time.Millisecond, 12 * time.Second, 12500 * time.Millisecond} {
		all = append(all, act(at, "n", "choria_provision#configure", "choria=e", true))
	}
	all = append(all, act(11*time.Second, "n", "choria_provision#jwt", "choria=e", true)) // not configure/restart
	got := stalls(res, all)
	if len(got) != 1 || got[0] != 1700*time.Millisecond {
		t.Fatalf("stalls %v, want [1.7s]", got)
	}
}

// Ledger time may fall behind this machine's clock at a change of leader (the new leader continues
// from the last stamp it applied), so an offset read once can misdate a grant by seconds. A grant
// the edge's own call history shows it asked for after the fault began is no stale act, whatever
// the ledger's dates say.
func TestCheckStale_AGrantTheEdgeAskedForAfterTheFaultIsNotStale(t *testing.T) {
	dir := t.TempDir()
	e := &Edge{Name: "edge-eu-1.mcollective"}
	w := newHistoryWriter(t, dir, e.Name)
	w.call(api.CallAcquire, 100, 200, api.AcquireRequest{Edge: e.Name, Region: "eu", MaxNodes: 50, RequestID: "q1"},
		api.AcquireResponse{Lease: apiLease("l2", 9, e.Name, "new")}, "", "")
	log := newCallLog()
	if err := log.read([]string{w.path}); err != nil {
		t.Fatal(err)
	}
	// The history's clock readings are nanoseconds; date the acquire 10 s after the fault began.
	log.calls[0].Wall = t0.Add(10 * time.Second)
	r := &Runner{opts: Options{LeaseTTL: 6 * time.Second}, calls: log}
	ev := &Event{Kind: EdgePartition, Edge: e, Start: t0, End: t0.Add(9 * time.Second), LedgerOffset: -5 * time.Minute}
	res := &RoundResult{Events: []*Event{ev}}
	byNode := map[string][]recorder.Action{"new": {act(11*time.Second, "new", "choria_provision#jwt", e.Caller(), true)}}
	// The ledger dates the grant 29 s earlier than the offset read after the fault says.
	ledger := map[string]api.Node{"new": {History: []api.Transition{{At: t0.Add(10*time.Second - 5*time.Minute - 29*time.Second), To: api.StateLeased, Edge: e.Name, LeaseID: "l2", LeaseToken: 9}}}}
	var c Check
	r.checkStale(&c, res, byNode, func(id string) api.Node { return ledger[id] })
	if len(c.Stale) != 0 {
		t.Fatalf("stale findings %+v, want none: the edge asked for the lease after the fault", c.Stale)
	}
}

// An edge cut off from the coordinators before it could learn of the pause (a partition of the
// edge or of its datacenter, a SIGSTOP) learns it only once it is back: until then it finishes
// the hosts it holds leases for, and its acts are not the pause's violations (the stale check
// still holds them to their leases). An edge cut off after it had learned of the pause, or any
// other edge, is still flagged.
func TestCheckPause_AnEdgeCutOffBeforeItCouldLearnThePauseIsNotFlaggedUntilItIsBack(t *testing.T) {
	r := &Runner{}
	cut := &Edge{Name: "edge-us-1.mcollective"}
	late := &Edge{Name: "edge-eu-1.mcollective"}
	res := &RoundResult{Events: []*Event{
		{Kind: OperatorPause, Start: t0, End: t0.Add(10 * time.Second)},
		{Kind: EdgePartition, Edge: cut, Start: t0.Add(-300 * time.Millisecond), End: t0.Add(5 * time.Second)},
		{Kind: DCPartition, Edge: late, Start: t0.Add(2500 * time.Millisecond), End: t0.Add(9 * time.Second)},
	}}
	round := []recorder.Action{
		act(2500*time.Millisecond, "cut-early", "choria_provision#configure", cut.Caller(), true),
		act(6500*time.Millisecond, "cut-back", "choria_provision#configure", cut.Caller(), true), // within the slack of its return
		act(7500*time.Millisecond, "cut-late", "choria_provision#jwt", cut.Caller(), true),
		act(3*time.Second, "learned", "choria_provision#jwt", late.Caller(), true),
		act(2500*time.Millisecond, "other", "choria_provision#jwt", "choria=edge-ap-1.mcollective", true),
	}
	var c Check
	r.checkPause(&c, res, round)
	got := map[string]bool{}
	for _, f := range c.Paused {
		got[f.Node] = true
	}
	if len(got) != 3 || !got["cut-late"] || !got["learned"] || !got["other"] {
		t.Fatalf("paused findings %+v, want cut-late, learned and other", c.Paused)
	}
}
