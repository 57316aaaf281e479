// SPDX-License-Identifier: Apache-2.0

package edgesuite

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/pkg/rpc"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/audit"
	"github.com/seed96588659/muster/sandbox/fleet/faults"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/labkit"
)

// Faulty nodes of the 1,000-node fleet, by index.
const (
	fleetSize     = 1000
	idxSilent     = 3
	idxDuplicate  = 7
	idxConfigFail = 11
	idxSlow       = 13
	idxLocked     = 17
	idxGone       = 19 // disconnects for good after its inventory: a node that lived for seconds
	idxFlaky      = 23 // fails configure twice, then succeeds: the wrapper's retries cover it
)

// TestEdge_ThousandNodesWithFaults: every healthy node is provisioned exactly once, every faulty
// one is reported with its own error, and none is started twice while in flight.
func TestEdge_ThousandNodesWithFaults(t *testing.T) {
	l := startLab(t, lab.Options{
		Emulated: fleetSize,
		Faults: faults.NewSet(
			rule(emu(idxSilent), faults.Fault{Silent: true}),
			rule(emu(idxDuplicate), faults.Fault{Duplicate: true}),
			rule(emu(idxConfigFail), faults.Fault{Fails: []faults.Fail{{Action: "choria_provision#configure", Times: 1 << 30, Message: "disk full"}}}),
			rule(emu(idxSlow), faults.Fault{Delay: 1500 * time.Millisecond, DelayActions: []string{"rpcutil#inventory"}}),
			rule(emu(idxGone), faults.Fault{Disconnect: &faults.Disconnect{After: "rpcutil#inventory"}}),
			rule(emu(idxFlaky), faults.Fault{Fails: []faults.Fail{{Action: "choria_provision#configure", Times: 2, Message: "try again"}}}),
		),
	})
	// Another provisioner takes the lock of one node before the edge starts: the edge must stop
	// at once, report it owned elsewhere and never act on it.
	labkit.LockNode(t, l, region, lab.ClientIdentity(region, 3), emu(idxLocked))

	re := startEdge(t, l, nil, nil)
	faulty := map[int]bool{idxSilent: true, idxDuplicate: true, idxConfigFail: true, idxLocked: true, idxGone: true}
	testkit.WaitFor(t, 4*time.Minute, "every healthy node provisioned and every faulty one reported", func() bool {
		for i := range fleetSize {
			if faulty[i] {
				continue
			}
			if !re.Has(emu(i), hostflow.Provisioned) {
				return false
			}
		}
		return re.Has(emu(idxDuplicate), hostflow.DuplicateResponder) && re.Has(emu(idxConfigFail), hostflow.Failed) &&
			re.Has(emu(idxLocked), hostflow.LockHeld) && re.Has(emu(idxGone), hostflow.Failed)
	})

	rep := labkit.LabReport(t, l)
	assertNoDoubleProvisioning(t, rep)
	for i := range fleetSize {
		id := emu(i)
		if faulty[i] {
			continue
		}
		if got := acceptedCount(rep, id, audit.Restart); got != 1 {
			t.Errorf("%s accepted %d restarts, want exactly 1", id, got)
		}
		// A skip (choria-provisioner's refusal of a queue entry older than two intervals, which a
		// loaded machine reaches) sends the node nothing; it is queued again by the next sweep.
		var acted []hostflow.Result
		for _, r := range re.ResultsOf(id) {
			if r.Outcome != hostflow.Skipped {
				acted = append(acted, r)
			}
		}
		if len(acted) != 1 {
			t.Errorf("%s has %d results that acted on it, want 1: %+v", id, len(acted), re.ResultsOf(id))
		}
	}

	// The silent node never answers discovery, so the edge never queues it.
	if got := re.ResultsOf(emu(idxSilent)); len(got) != 0 {
		t.Errorf("silent node has results: %+v", got)
	}
	// Its twin answers jwt too: the first credential-making action stops its flow at once.
	expectError(t, re, emu(idxDuplicate), hostflow.DuplicateResponder, rpc.ErrDuplicateResponder, "answered jwt for "+emu(idxDuplicate))
	expectError(t, re, emu(idxConfigFail), hostflow.Failed, rpc.ErrMaxTries, "disk full")
	expectError(t, re, emu(idxLocked), hostflow.LockHeld, rpc.ErrLocked, rpc.LockedMessage)
	expectError(t, re, emu(idxGone), hostflow.Failed, rpc.ErrResponseCount, "received 0 responses")
	// The locked node accepted nothing from the edge.
	for _, action := range []string{audit.Configure, audit.Restart} {
		if n := rep.Nodes[emu(idxLocked)]; n != nil && n.Actions[action] != nil {
			if callers := n.Actions[action].Callers; len(callers) > 0 {
				t.Errorf("locked node got %s from %v", action, callers)
			}
		}
	}
}

// expectError checks identity's first result: its outcome, the sentinel it wraps (unless nil)
// and its text.
func expectError(t *testing.T, re *labkit.Edge, identity string, o hostflow.Outcome, sentinel error, text string) {
	t.Helper()
	res := re.ResultsOf(identity)
	if len(res) == 0 {
		t.Errorf("%s: no result", identity)
		return
	}
	r := res[0]
	if r.Outcome != o || r.Err == nil || (sentinel != nil && !errors.Is(r.Err, sentinel)) || !strings.Contains(r.Err.Error(), text) {
		t.Errorf("%s: outcome %s, error %v; want %s wrapping %v and naming %q", identity, r.Outcome, r.Err, o, sentinel, text)
	}
}
