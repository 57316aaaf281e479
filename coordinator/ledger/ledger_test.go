// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/seed96588659/muster/pkg/api"
)

func TestLedger_RegisterIsIdempotent(t *testing.T) {
	h := newHarness(t)
	r := h.register(t0, "eu", "n1", "n2", "n3")
	if r.Added != 3 || len(r.Rejected) != 0 {
		t.Fatalf("first register: %+v", r)
	}
	r = h.register(t0.Add(time.Minute), "eu", "n1", "n2", "n3", "n4")
	if r.Added != 1 || r.Unchanged != 3 {
		t.Fatalf("second register: %+v", r)
	}
	if got := h.counts()["eu"][api.StateWaiting]; got != 4 {
		t.Fatalf("waiting in eu = %d, want 4", got)
	}
	n := h.node("n1")
	if !n.DiscoveredAt.Equal(t0) || n.State != api.StateWaiting || len(n.History) != 1 {
		t.Fatalf("n1 = %+v, want discovered at t0 and one history entry", n)
	}
}

func TestLedger_RegisterRefusesBadInput(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "n1")
	before := h.counts()
	r := h.register(t0, "eu", "", "bad\x00id", strings.Repeat("x", 300))
	if r.Added != 0 || len(r.Rejected) != 3 {
		t.Fatalf("register of bad identities: %+v", r)
	}
	for _, rej := range r.Rejected {
		if !errors.Is(rej.Err, ErrBadCommand) || rej.Reason == "" {
			t.Fatalf("rejection %+v lacks a reason", rej)
		}
	}
	bad := testPolicy()
	bad.MaxAttempts = 0
	mustErr(t, h.apply(&Register{Now: t0, Policy: bad, Nodes: []RegisterNode{{Identity: "n9", Region: "eu"}}}), ErrBadCommand)
	mustErr(t, h.apply(&Register{Policy: testPolicy(), Nodes: []RegisterNode{{Identity: "n9", Region: "eu"}}}), ErrBadCommand)
	if _, err := h.l.Node("n9"); !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("n9 was written by a refused command: %v", err)
	}
	if after := h.counts(); after["eu"][api.StateWaiting] != before["eu"][api.StateWaiting] {
		t.Fatalf("counts changed: %v -> %v", before, after)
	}
	if idx, _, _ := h.l.AppliedIndex(); idx != h.index {
		t.Fatalf("applied index %d, want %d: refused commands still consume their index", idx, h.index)
	}
}

func TestLedger_GrantTokenIsLogIndexAndNoNodeTwice(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a", "b", "c", "d", "e")
	h.register(t0, "us", "u1")
	l1 := h.grant(t0, "edge-a", "eu", 3)
	if l1 == nil || len(l1.Nodes) != 3 || l1.Token != h.index {
		t.Fatalf("grant 1 = %+v, want 3 nodes with token %d", l1, h.index)
	}
	if !l1.ExpiresAt.Equal(t0.Add(30 * time.Second)) {
		t.Fatalf("expires_at %s, want now+ttl from the command", l1.ExpiresAt)
	}
	l2 := h.grant(t0, "edge-b", "eu", 10)
	if l2 == nil || len(l2.Nodes) != 2 || l2.Token <= l1.Token {
		t.Fatalf("grant 2 = %+v", l2)
	}
	for _, id := range l2.Nodes {
		if slices.Contains(l1.Nodes, id) || strings.HasPrefix(id, "u") {
			t.Fatalf("node %s granted twice or from the wrong region", id)
		}
	}
	if l3 := h.grant(t0, "edge-c", "eu", 10); l3 != nil {
		t.Fatalf("grant with nothing waiting returned %+v", l3)
	}
	n := h.node(l1.Nodes[0])
	if n.State != api.StateLeased || n.LeaseID != l1.ID || n.LeaseToken != l1.Token || n.Edge != "edge-a" {
		t.Fatalf("leased node = %+v", n)
	}
	if c := h.counts()["eu"]; c[api.StateLeased] != 5 || c[api.StateWaiting] != 0 {
		t.Fatalf("counts = %v", c)
	}
	mustErr(t, h.apply(&Grant{Now: t0, LeaseID: l1.ID, Edge: "x", Region: "us", Max: 1, TTL: time.Second, Policy: testPolicy()}), ErrBadCommand)
	mustErr(t, h.apply(&Grant{Now: t0, LeaseID: "z", Edge: "x", Region: "us", Max: 0, TTL: time.Second, Policy: testPolicy()}), ErrBadCommand)
}

// TestLedger_GrantReplayedUnderTheSameIDReturnsTheSameLease: a grant applied again for the same
// edge and region (a retry whose first answer was lost) changes no node and returns the lease,
// its TTL counted from the retry (the edge counts it from there).
func TestLedger_GrantReplayedUnderTheSameIDReturnsTheSameLease(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a", "b", "c")
	g := &Grant{Now: t0, LeaseID: "r-1", Edge: "edge-a", Region: "eu", Max: 2, TTL: time.Minute, Policy: testPolicy()}
	first := mustResult[*GrantResult](t, h.apply(g))
	before, _, err := h.l.Nodes(NodeFilter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	g.Now = t0.Add(time.Second)
	again := mustResult[*GrantResult](t, h.apply(g))
	want := *first.Lease
	want.RenewedAt, want.ExpiresAt = g.Now, g.Now.Add(g.TTL)
	if first.Replayed || !again.Replayed || !reflect.DeepEqual(*again.Lease, want) {
		t.Fatalf("replayed grant: first %+v, again %+v, want lease %+v", first, again, want)
	}
	if stored, err := h.l.Lease(want.ID); err != nil || !reflect.DeepEqual(*stored, want) {
		t.Fatalf("stored lease after replay = %+v (%v), want %+v", stored, err, want)
	}
	// A replay stamped earlier than the lease's expiry minus its TTL never shortens the lease.
	g.Now = t0
	if early := mustResult[*GrantResult](t, h.apply(g)); !early.Lease.ExpiresAt.Equal(want.ExpiresAt) {
		t.Fatalf("an earlier replay moved expires_at to %s, want %s", early.Lease.ExpiresAt, want.ExpiresAt)
	}
	if after, _, _ := h.l.Nodes(NodeFilter{Limit: 10}); !reflect.DeepEqual(before, after) {
		t.Fatalf("a replayed grant changed nodes:\n%+v\n%+v", before, after)
	}
	if c := h.counts()["eu"]; c[api.StateLeased] != 2 || c[api.StateWaiting] != 1 {
		t.Fatalf("counts after replay = %v", c)
	}
	other := *g
	other.Edge = "edge-b"
	mustErr(t, h.apply(&other), ErrBadCommand)
}

func TestLedger_GrantRefusedWhilePaused(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a")
	mustResult[*PauseState](t, h.apply(&Pause{Now: t0, Paused: true, By: "ops", Reason: "maintenance"}))
	mustErr(t, h.apply(&Grant{Now: t0, LeaseID: "l", Edge: "e", Region: "eu", Max: 1, TTL: time.Second, Policy: testPolicy()}), ErrPaused)
	p, err := h.l.Pause()
	if err != nil || !p.Paused || p.By != "ops" || !p.At.Equal(t0) {
		t.Fatalf("pause = %+v, %v", p, err)
	}
	h.apply(&Pause{Now: t0, Paused: false})
	if ls := h.grant(t0, "e", "eu", 1); ls == nil {
		t.Fatal("no grant after resume")
	}
}

func TestLedger_RenewChecksLeaseAndToken(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a")
	ls := h.grant(t0, "e", "eu", 1)
	mustErr(t, h.apply(&Renew{Now: t0, LeaseID: ls.ID, Token: ls.Token + 1, TTL: time.Minute}), ErrTokenMismatch)
	mustErr(t, h.apply(&Renew{Now: t0, LeaseID: "nope", Token: ls.Token, TTL: time.Minute}), ErrUnknownLease)
	r := mustResult[*RenewResult](t, h.apply(&Renew{Now: t0.Add(10 * time.Second), LeaseID: ls.ID, Token: ls.Token, TTL: time.Minute}))
	if !r.Lease.ExpiresAt.Equal(t0.Add(70 * time.Second)) {
		t.Fatalf("renewed expiry %s", r.Lease.ExpiresAt)
	}
	mustErr(t, h.apply(&Renew{Now: t0.Add(71 * time.Second), LeaseID: ls.ID, Token: ls.Token, TTL: time.Minute}), ErrLeaseExpired)
}

func TestLedger_StaleReportRejected(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a", "b")
	old := h.grant(t0, "edge-a", "eu", 2)
	// The lease runs out; a later grant (after the lock window) goes to another edge.
	exp := mustResult[*ExpireResult](t, h.apply(&Expire{Now: t0.Add(40 * time.Second), Grace: 5 * time.Second, Policy: testPolicy(), LeaseIDs: []string{old.ID}}))
	if len(exp.Expired) != 1 || exp.Returned != 2 {
		t.Fatalf("expire = %+v", exp)
	}
	later := t0.Add(30*time.Second + testPolicy().LockWindow + time.Second)
	cur := h.grant(later, "edge-b", "eu", 1)
	if cur == nil {
		t.Fatal("no grant to edge-b after the lock window")
	}
	mustErr(t, h.report(later, old, api.OutcomeProvisioned, "a", "b"), ErrUnknownLease)
	wrongToken := *cur
	wrongToken.Token = old.Token
	mustErr(t, h.report(later, &wrongToken, api.OutcomeProvisioned, cur.Nodes[0]), ErrTokenMismatch)

	other := "a"
	if cur.Nodes[0] == "a" {
		other = "b"
	}
	rr := mustResult[*ReportResult](t, h.report(later, cur, api.OutcomeProvisioned, other, "ghost", cur.Nodes[0]))
	if rr.Accepted != 1 || len(rr.Rejected) != 2 || !rr.LeaseDone {
		t.Fatalf("report = %+v", rr)
	}
	if !errors.Is(rr.Rejected[0].Err, ErrNotInLease) || !errors.Is(rr.Rejected[1].Err, ErrUnknownNode) {
		t.Fatalf("rejections = %+v", rr.Rejected)
	}
	if n := h.node(other); n.State != api.StateWaiting {
		t.Fatalf("node %s changed by a report under a lease that does not hold it: %+v", other, n)
	}
	if n := h.node(cur.Nodes[0]); n.State != api.StateProvisioned || !n.FinishedAt.Equal(later) || n.LeaseID != "" {
		t.Fatalf("provisioned node = %+v", n)
	}
	if _, err := h.l.Lease(cur.ID); !errors.Is(err, ErrUnknownLease) {
		t.Fatalf("finished lease still present: %v", err)
	}
}

func TestLedger_FailuresBackOffThenAbandon(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a")
	now := t0
	for attempt := 1; attempt <= 3; attempt++ {
		ls := h.grant(now, "e", "eu", 1)
		if ls == nil {
			t.Fatalf("attempt %d: no grant at %s", attempt, now)
		}
		mustResult[*ReportResult](t, h.report(now, ls, api.OutcomeFailed, "a"))
		n := h.node("a")
		if n.Attempts != attempt || n.LastError != "inventory failed" {
			t.Fatalf("attempt %d: node = %+v", attempt, n)
		}
		if attempt == 3 {
			if n.State != api.StateAbandoned {
				t.Fatalf("after max attempts state = %s", n.State)
			}
			break
		}
		want := now.Add(testPolicy().backoff(attempt))
		if n.State != api.StateWaiting || !n.NotBefore.Equal(want) {
			t.Fatalf("attempt %d: state %s not_before %s, want waiting until %s", attempt, n.State, n.NotBefore, want)
		}
		if early := h.grant(want.Add(-time.Nanosecond), "e", "eu", 1); early != nil {
			t.Fatalf("attempt %d: granted during backoff", attempt)
		}
		now = want
	}
	if ls := h.grant(now.Add(time.Hour), "e", "eu", 1); ls != nil {
		t.Fatal("abandoned node was granted")
	}
	h.register(now.Add(time.Hour), "eu", "a")
	if n := h.node("a"); n.State != api.StateAbandoned {
		t.Fatalf("abandoned node requeued by discovery: %s", n.State)
	}
}

func TestLedger_ExpiryRespectsGraceAndLockWindow(t *testing.T) {
	h, ls := leasedOne(t)
	grace := 5 * time.Second
	r := mustResult[*ExpireResult](t, h.apply(&Expire{Now: ls.ExpiresAt.Add(grace - time.Nanosecond), Grace: grace, Policy: testPolicy(), LeaseIDs: []string{ls.ID}}))
	if len(r.Expired) != 0 {
		t.Fatalf("expired before expires_at+grace: %+v", r)
	}
	at := ls.ExpiresAt.Add(grace)
	r = mustResult[*ExpireResult](t, h.apply(&Expire{Now: at, Grace: grace, Policy: testPolicy(), LeaseIDs: []string{ls.ID}}))
	if len(r.Expired) != 1 {
		t.Fatalf("not expired at expires_at+grace: %+v", r)
	}
	n := h.node("a")
	if n.State != api.StateWaiting || n.Attempts != 1 || n.LockEdge != "edge-a" || !n.LockUntil.Equal(ls.ExpiresAt.Add(testPolicy().LockWindow)) {
		t.Fatalf("expired node = %+v", n)
	}
	afterBackoff := n.NotBefore
	if g := h.grant(afterBackoff, "edge-b", "eu", 1); g != nil {
		t.Fatal("another edge was offered the node inside the lock window")
	}
	if g := h.grant(n.LockUntil, "edge-b", "eu", 1); g == nil {
		t.Fatal("another edge was not offered the node after the lock window")
	}
}

func TestLedger_ExpiryAllowsTheSameEdgeInsideLockWindow(t *testing.T) {
	h, ls := leasedOne(t)
	h.apply(&Expire{Now: ls.ExpiresAt.Add(time.Second), Grace: time.Second, Policy: testPolicy(), LeaseIDs: []string{ls.ID}})
	n := h.node("a")
	if g := h.grant(n.NotBefore, "edge-a", "eu", 1); g == nil {
		t.Fatal("the lock holder itself was kept from its node")
	}
}

func TestLedger_LockedOutcomeKeepsEveryoneOut(t *testing.T) {
	h, ls := leasedOne(t)
	mustResult[*ReportResult](t, h.report(t0, ls, api.OutcomeLockHeld, "a"))
	n := h.node("a")
	if n.State != api.StateWaiting || !n.NotBefore.Equal(t0.Add(testPolicy().LockWindow)) {
		t.Fatalf("locked node = %+v", n)
	}
	for _, e := range []string{"edge-a", "edge-b"} {
		if g := h.grant(n.NotBefore.Add(-time.Nanosecond), e, "eu", 1); g != nil {
			t.Fatalf("%s was offered a node another worker holds the lock on", e)
		}
	}
	if g := h.grant(n.NotBefore, "edge-b", "eu", 1); g == nil {
		t.Fatal("node not offered after the lock window")
	}
}

func TestLedger_ExtendMovesEveryLease(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a", "b")
	l1 := h.grant(t0, "e1", "eu", 1)
	l2 := h.grant(t0.Add(10*time.Second), "e2", "eu", 1)
	now := t0.Add(35 * time.Second) // l1 is past expires_at, l2 is not
	r := mustResult[*ExtendResult](t, h.apply(&Extend{Now: now, By: 3 * time.Second}))
	if r.Extended != 2 {
		t.Fatalf("extend = %+v", r)
	}
	g1, _ := h.l.Lease(l1.ID)
	g2, _ := h.l.Lease(l2.ID)
	if !g1.ExpiresAt.Equal(now.Add(3*time.Second)) || !g2.ExpiresAt.Equal(l2.ExpiresAt.Add(3*time.Second)) {
		t.Fatalf("extended expiries %s %s", g1.ExpiresAt, g2.ExpiresAt)
	}
}

func TestLedger_SeenAgainIsProvisionedAgain(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "p", "d", "s")
	ls := h.grant(t0, "e", "eu", 3)
	h.apply(&Report{Now: t0, LeaseID: ls.ID, Token: ls.Token, Policy: testPolicy(), Results: []Result{
		{Identity: "p", Outcome: api.OutcomeProvisioned}, {Identity: "d", Outcome: api.OutcomeDeferred}, {Identity: "s", Outcome: api.OutcomeShutdown},
	}})
	// Seen again at once (a discovery that raced the restart) changes nothing.
	r := h.register(t0.Add(time.Second/2), "eu", "p", "d", "s")
	if r.Requeued != 0 {
		t.Fatalf("requeued too early: %+v", r)
	}
	r = h.register(t0.Add(time.Minute), "eu", "p", "d", "s")
	if r.Requeued != 3 {
		t.Fatalf("register after the guard: %+v", r)
	}
	for _, id := range []string{"p", "d", "s"} {
		if n := h.node(id); n.State != api.StateWaiting || n.Attempts != 0 {
			t.Fatalf("%s = %+v", id, n)
		}
	}
}

func TestLedger_HistoryIsBounded(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a")
	now := t0
	for i := 0; i < 10; i++ {
		ls := h.grant(now, "e", "eu", 1)
		h.report(now, ls, api.OutcomeUpgradeSent, "a")
		h.apply(&Report{}) // a refused command in between changes nothing
		n := h.node("a")
		if n.State == api.StateAbandoned {
			break
		}
		now = n.NotBefore
	}
	n := h.node("a")
	if len(n.History) != testPolicy().HistoryLimit {
		t.Fatalf("history has %d entries, want %d", len(n.History), testPolicy().HistoryLimit)
	}
	if last := n.History[len(n.History)-1]; last.To != n.State {
		t.Fatalf("last history entry %+v does not end in the current state %s", last, n.State)
	}
}

func TestLedger_UnknownCommandTypes(t *testing.T) {
	h := newHarness(t)
	h.index++
	r := h.l.ApplyLogs([]*raft.Log{{Index: h.index, Term: 1, Type: raft.LogCommand, Data: []byte{byte(IgnoreUnknown | 0x33), '{', '}'}}})[0]
	if r != nil {
		t.Fatalf("ignorable unknown command returned %v", r)
	}
	// A known type whose body does not decode halts (undecodable_test.go), applying nothing.
	h.index++
	h.applyHalting("a truncated grant", &raft.Log{Index: h.index, Term: 1, Type: raft.LogCommand, Data: []byte{byte(CmdGrant), '{'}})
}

func TestLedger_ReplayedEntriesAreSkipped(t *testing.T) {
	h := newHarness(t)
	var log []*raft.Log
	log = append(log, h.entry(&Register{Now: t0, Policy: testPolicy(), Nodes: []RegisterNode{{Identity: "a", Region: "eu"}}}))
	log = append(log, h.entry(&Grant{Now: t0, LeaseID: "l1", Edge: "e", Region: "eu", Max: 1, TTL: time.Minute, Policy: testPolicy()}))
	h.l.ApplyLogs(log)
	before, err := h.l.Digest()
	if err != nil {
		t.Fatal(err)
	}
	// Raft replays the tail after a restart: the ledger must not apply it twice.
	path := h.l.Path()
	h.l.Close()
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if r := l.ApplyLogs(log); r[0] != nil || r[1] != nil {
		t.Fatalf("replayed entries returned %v", r)
	}
	after, _ := l.Digest()
	if !bytes.Equal(before, after) {
		t.Fatal("replay changed the ledger")
	}
}

func TestLedger_MemberAddresses(t *testing.T) {
	h := newHarness(t)
	mustResult[*Member](t, h.apply(&Member{ID: "c1", APIAddress: "http://127.0.0.1:1"}))
	mustResult[*Member](t, h.apply(&Member{ID: "c2", APIAddress: "http://127.0.0.1:2"}))
	mustResult[*Member](t, h.apply(&Member{ID: "c1", Remove: true}))
	mustErr(t, h.apply(&Member{APIAddress: "x"}), ErrBadCommand)
	m, err := h.l.Members()
	if err != nil || len(m) != 1 || m["c2"] != "http://127.0.0.1:2" {
		t.Fatalf("members = %v, %v", m, err)
	}
}

func TestLedger_WrongEdgeOrRegionRefused(t *testing.T) {
	h, ls := leasedOne(t)
	mustErr(t, h.apply(&Renew{Now: t0, LeaseID: ls.ID, Token: ls.Token, TTL: time.Minute, Region: "us"}), ErrWrongRegion)
	mustErr(t, h.apply(&Renew{Now: t0, LeaseID: ls.ID, Token: ls.Token, TTL: time.Minute, Edge: "edge-b"}), ErrWrongEdge)
	mustErr(t, h.apply(&Report{Now: t0, LeaseID: ls.ID, Token: ls.Token, Policy: testPolicy(), Region: "us",
		Results: []Result{{Identity: "a", Outcome: api.OutcomeProvisioned}}}), ErrWrongRegion)
	if n := h.node("a"); n.State != api.StateLeased {
		t.Fatalf("node changed by a refused report: %s", n.State)
	}
}

// TestLedger_RegisterRefusalsNameEachNode: the leader's check before a registration refuses a
// bad region whole and each bad node alone: an invalid or repeated identity, and a node of another
// region, leased or not (an edge of one region must not take over another's nodes).
func TestLedger_RegisterRefusalsNameEachNode(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a", "b")
	h.grant(t0, "e", "eu", 1)
	if _, err := h.l.RegisterRefusals("", []string{"c"}); !errors.Is(err, ErrBadCommand) {
		t.Fatalf("a register without region: %v, want it refused whole", err)
	}
	for _, tc := range []struct {
		region string
		ids    []string
		bad    string
		want   error
	}{
		{"eu", []string{"c", ""}, "", ErrBadCommand},
		{"eu", []string{"c", "c"}, "c", ErrBadCommand},
		{"us", []string{"c", "a"}, "a", ErrWrongRegion},
		{"us", []string{"c", "b"}, "b", ErrWrongRegion},
	} {
		refused, err := h.l.RegisterRefusals(tc.region, tc.ids)
		if err != nil || len(refused) != 1 || !errors.Is(refused[tc.bad], tc.want) {
			t.Errorf("RegisterRefusals(%q, %q) = %v, %v; want only %q refused with %v", tc.region, tc.ids, refused, err, tc.bad, tc.want)
		}
	}
}

// TestLedger_RegisterNeverMovesAKnownNodeToAnotherRegion: from cluster protocol 3 a registration
// naming another region leaves a known node, its region and facts as they were and refuses it by
// name; at protocol 2 a node not leased moves, as the builds before applied it.
func TestLedger_RegisterNeverMovesAKnownNodeToAnotherRegion(t *testing.T) {
	for _, v := range []int{regionProtocol - 1, Protocol} {
		h := newHarnessAt(t, v)
		h.apply(&Register{Now: t0, Edge: "e-us", Policy: testPolicy(), Nodes: []RegisterNode{{Identity: "u1", Region: "us", Facts: []byte(`{"dc":"us"}`)}}})
		r := mustResult[*RegisterResult](t, h.apply(&Register{Now: t0.Add(time.Second), Edge: "e-eu", Policy: testPolicy(), Nodes: []RegisterNode{{Identity: "u1", Region: "eu", Facts: []byte(`{"dc":"eu"}`)}}}))
		n := h.node("u1")
		if v < regionProtocol {
			if n.Region != "eu" || len(r.Rejected) != 0 {
				t.Fatalf("protocol %d: u1 %+v, result %+v; want the older build's move", v, n, r)
			}
			continue
		}
		if n.Region != "us" || string(n.Facts) != `{"dc":"us"}` || len(r.Rejected) != 1 || !errors.Is(r.Rejected[0].Err, ErrWrongRegion) {
			t.Fatalf("protocol %d: u1 %+v, result %+v; want it left in us and refused by name", v, n, r)
		}
	}
}

func TestLedger_NodesFiltersByRegionAndStateAcrossPages(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a", "c", "e", "g")
	h.register(t0, "us", "b", "d", "f")
	h.grant(t0, "edge", "eu", 2) // a and c
	h.grant(t0, "edge", "us", 1) // b
	ids := func(f NodeFilter) []string {
		t.Helper()
		var out []string
		for {
			page, next, err := h.l.Nodes(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range page {
				if (f.Region != "" && n.Region != f.Region) || (f.State != "" && n.State != f.State) {
					t.Fatalf("filter %+v listed %+v", f, n)
				}
				out = append(out, n.Identity)
			}
			if next == "" {
				return out
			}
			f.After = next
		}
	}
	for _, c := range []struct {
		f    NodeFilter
		want []string
	}{
		{NodeFilter{Region: "eu", Limit: 1}, []string{"a", "c", "e", "g"}},
		{NodeFilter{State: api.StateLeased, Limit: 2}, []string{"a", "b", "c"}},
		{NodeFilter{Region: "eu", State: api.StateWaiting, Limit: 1}, []string{"e", "g"}},
		{NodeFilter{Region: "us", State: api.StateWaiting}, []string{"d", "f"}},
		{NodeFilter{Region: "nowhere"}, nil},
	} {
		if got := ids(c.f); !slices.Equal(got, c.want) {
			t.Errorf("Nodes(%+v) = %v, want %v", c.f, got, c.want)
		}
	}
}

func TestLedger_ReleasedWaitsAgainWithoutAnAttempt(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a", "b")
	ls := h.grant(t0, "edge-a", "eu", 2)
	mustResult[*ReportResult](t, h.report(t0, ls, api.OutcomeFailed, "b"))
	at := t0.Add(time.Second)
	h.apply(&Report{Now: at, LeaseID: ls.ID, Token: ls.Token, Policy: testPolicy(), Results: []Result{
		{Identity: "a", Outcome: api.OutcomeReleased, Error: "a: stopped by lease loss"},
	}})
	n := h.node("a")
	last := n.History[len(n.History)-1]
	switch {
	case n.State != api.StateWaiting || n.Attempts != 0:
		t.Fatalf("released node = state %s attempts %d, want waiting with no attempt", n.State, n.Attempts)
	case n.NotBefore.After(at):
		t.Fatalf("released node waits until %s, want no backoff", n.NotBefore)
	case last.Reason != "released by the edge" || last.Error != "a: stopped by lease loss" || last.LeaseID != ls.ID:
		t.Fatalf("history entry %+v", last)
	case n.LeaseID != "":
		t.Fatalf("released node keeps lease %s", n.LeaseID)
	}
	// The edge may have called the node: only it is offered the node inside the lock window.
	if g := h.grant(at, "edge-b", "eu", 1); g != nil {
		t.Fatalf("another edge was offered a released node inside the lock window: %v", g.Nodes)
	}
	if g := h.grant(at, "edge-a", "eu", 1); g == nil || len(g.Nodes) != 1 || g.Nodes[0] != "a" {
		t.Fatalf("the releasing edge was not offered its node again: %+v", g)
	}
}

// leasedOne is a ledger with one node, a of eu, leased at t0 to edge-a, and that lease.
func leasedOne(t *testing.T) (*harness, *Lease) {
	t.Helper()
	h := newHarness(t)
	h.register(t0, "eu", "a")
	return h, h.grant(t0, "edge-a", "eu", 1)
}
