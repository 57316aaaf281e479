// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// newProtocol1Harness is a ledger as one written before cluster protocols existed.
func newProtocol1Harness(t *testing.T) *harness {
	t.Helper()
	return openHarness(t, Options{})
}

// newHarnessAt is a ledger whose cluster runs protocol v.
func newHarnessAt(t *testing.T, v int) *harness {
	t.Helper()
	h := newProtocol1Harness(t)
	if v > 1 {
		mustResult[*ProtocolResult](t, h.apply(&SetProtocol{Version: v}))
	}
	return h
}

func clusterProtocol(t *testing.T, l *Ledger) int {
	t.Helper()
	v, err := l.ClusterProtocol()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestProtocol_OneRefusesReleasedGoneAndRetryUntilRaised: until the cluster protocol is 2, a
// member of this build applies the log exactly as a member of the build before released, gone
// and retry did (it refused such a report as bad input and halted at the retry), so members of
// both builds keep identical ledgers during a rolling upgrade.
func TestProtocol_OneRefusesReleasedGoneAndRetryUntilRaised(t *testing.T) {
	h := newProtocol1Harness(t)
	if v := clusterProtocol(t, h.l); v != 1 {
		t.Fatalf("a fresh ledger runs cluster protocol %d, want 1", v)
	}
	h.register(t0, "eu", "a", "b", "c")
	ls := h.grant(t0, "edge-a", "eu", 3)
	before := map[string]*Node{"a": h.node("a"), "b": h.node("b"), "c": h.node("c")}

	for _, tc := range []struct {
		id      string
		outcome api.Outcome
	}{{"a", api.OutcomeReleased}, {"b", api.OutcomeGone}} {
		// A batch-mate the old build knows is refused with it: the old build refused the whole
		// command at an outcome it did not know.
		c := &Report{Now: t0.Add(time.Second), LeaseID: ls.ID, Token: ls.Token, Policy: testPolicy(),
			Results: []Result{{Identity: "c", Outcome: api.OutcomeProvisioned}, {Identity: tc.id, Outcome: tc.outcome}}}
		r := h.apply(c)
		mustErr(t, r, ErrClusterProtocol)
		want := "node " + tc.id + ": outcome " + string(tc.outcome) + " needs cluster protocol 2; the cluster runs 1 until every member is upgraded"
		if msg := r.(error).Error(); !strings.Contains(msg, want) {
			t.Fatalf("refusal %q does not say %q", msg, want)
		}
	}
	for id, n := range before {
		if got := h.node(id); !reflect.DeepEqual(got, n) {
			t.Fatalf("node %s changed by a refused report:\n got %+v\nwant %+v", id, got, n)
		}
	}
	r := h.retry(t0.Add(time.Second), Retry{Nodes: []string{"a"}})
	mustErr(t, r, ErrClusterProtocol)
	if msg := r.(error).Error(); !strings.Contains(msg, "retry needs cluster protocol 2; the cluster runs 1 until every member is upgraded") {
		t.Fatalf("retry refusal %q does not name the protocol", msg)
	}

	res := mustResult[*ProtocolResult](t, h.apply(&SetProtocol{Version: 2}))
	if res.Version != 2 || !res.Raised {
		t.Fatalf("SetProtocol{2}: %+v", res)
	}
	if v := clusterProtocol(t, h.l); v != 2 {
		t.Fatalf("cluster protocol %d after SetProtocol{2}", v)
	}
	rr := mustResult[*ReportResult](t, h.apply(&Report{Now: t0.Add(2 * time.Second), LeaseID: ls.ID, Token: ls.Token, Policy: testPolicy(),
		Results: []Result{{Identity: "a", Outcome: api.OutcomeReleased}, {Identity: "b", Outcome: api.OutcomeGone}}}))
	if rr.Accepted != 2 {
		t.Fatalf("report at protocol 2: %+v", rr)
	}
	if a, b := h.node("a"), h.node("b"); a.State != api.StateWaiting || b.State != api.StateGone {
		t.Fatalf("at protocol 2: a %s (want waiting), b %s (want gone)", a.State, b.State)
	}
	ret := mustResult[*RetryResult](t, h.retry(t0.Add(3*time.Second), Retry{Nodes: []string{"b"}}))
	if len(ret.Retried) != 1 || h.node("b").State != api.StateWaiting {
		t.Fatalf("retry at protocol 2: %+v, b is %s", ret, h.node("b").State)
	}
}

// TestProtocol_LowerOrEqualIsNoOpAndBadVersionRefused: the protocol never goes back, and a
// version below 1 is bad input.
func TestProtocol_LowerOrEqualIsNoOpAndBadVersionRefused(t *testing.T) {
	h := newProtocol1Harness(t)
	if res := mustResult[*ProtocolResult](t, h.apply(&SetProtocol{Version: 1})); res.Raised || res.Version != 1 {
		t.Fatalf("SetProtocol{1} on protocol 1: %+v, want a no-op", res)
	}
	mustResult[*ProtocolResult](t, h.apply(&SetProtocol{Version: 2}))
	if res := mustResult[*ProtocolResult](t, h.apply(&SetProtocol{Version: 1})); res.Raised || res.Version != 2 {
		t.Fatalf("SetProtocol{1} on protocol 2: %+v, want a no-op answering 2", res)
	}
	if v := clusterProtocol(t, h.l); v != 2 {
		t.Fatalf("cluster protocol %d after a lower SetProtocol, want 2", v)
	}
	mustErr(t, h.apply(&SetProtocol{Version: 0}), ErrBadCommand)
}

// TestProtocol_AboveSupportedHaltsBeforeApplyingAnything: a cluster protocol this build cannot
// apply means entries it does not understand follow, so the member halts as at an unknown
// command, before anything of the batch, with a line saying what to do.
func TestProtocol_AboveSupportedHaltsBeforeApplyingAnything(t *testing.T) {
	h, logs := newLoggedHarness(t)
	h.register(t0, "eu", "a")
	reg := h.entry(&Register{Now: t0, Policy: testPolicy(), Nodes: []RegisterNode{{Identity: "b", Region: "eu"}}})
	up := h.entry(&SetProtocol{Version: Protocol + 1})

	panicked := h.applyHalting("a cluster protocol above this build's", reg, up)
	want := fmt.Sprintf("cluster protocol %d needs a newer muster-coordinator; this one applies up to %d", Protocol+1, Protocol)
	if s, _ := panicked.(string); !strings.Contains(s, want) {
		t.Fatalf("halt %v does not say %q", panicked, want)
	}
	if !strings.Contains(logs.String(), want) {
		t.Fatalf("log does not say %q: %s", want, logs.String())
	}
	if v := clusterProtocol(t, h.l); v != 1 {
		t.Fatalf("cluster protocol %d after the halt, want 1", v)
	}
}

// TestProtocol_TravelsInSnapshots: the cluster protocol is ledger state, so a member that
// installs a snapshot applies what follows as the cluster does; restoring an older snapshot
// takes it back with everything else.
func TestProtocol_TravelsInSnapshots(t *testing.T) {
	src := newProtocol1Harness(t)
	src.register(t0, "eu", "a")
	old := persist(t, src.l)
	mustResult[*ProtocolResult](t, src.apply(&SetProtocol{Version: 2}))
	raised := persist(t, src.l)

	dst := newProtocol1Harness(t)
	if err := dst.l.FSM().Restore(io.NopCloser(bytes.NewReader(raised))); err != nil {
		t.Fatal(err)
	}
	if v := clusterProtocol(t, dst.l); v != 2 {
		t.Fatalf("cluster protocol %d after restoring a protocol 2 snapshot", v)
	}
	if !bytes.Equal(digest(t, src.l), digest(t, dst.l)) {
		t.Fatal("restored ledger differs from its source")
	}
	if err := dst.l.FSM().Restore(io.NopCloser(bytes.NewReader(old))); err != nil {
		t.Fatal(err)
	}
	if v := clusterProtocol(t, dst.l); v != 1 {
		t.Fatalf("cluster protocol %d after restoring a snapshot from before it was raised, want 1", v)
	}
}
