// SPDX-License-Identifier: Apache-2.0

package lessor

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/pkg/api"
)

// memoryPolicy keeps every memory the ledger holds in ledger time long enough to tell a jump of
// ledger time from real time passing: a minute's backoff, reprovision_after a minute, go-choria's
// two-minute lock window, a report or retry answer kept 15 minutes.
func memoryPolicy() ledger.Policy {
	return ledger.Policy{MaxAttempts: 3, BackoffBase: time.Minute, BackoffMax: 4 * time.Minute, LockWindow: 2 * time.Minute, HistoryLimit: 20, ReprovisionAfter: time.Minute}
}

func memoryConfig() Config {
	return Config{TTL: 30 * time.Second, Grace: 5 * time.Second, MaxWait: 10 * time.Second, ExpiryInterval: time.Hour, Extension: time.Second,
		ReportMemory: 15 * time.Minute, Policy: memoryPolicy()}
}

// skewedSuccessor is a failover world whose leader A has a right wall clock and whose follower B,
// 15 minutes ahead, applies everything A commits and takes over one second after A is deposed.
type skewedSuccessor struct {
	*failoverWorld
	a, b *Manager
}

func newSkewedSuccessor(t *testing.T, ids ...string) *skewedSuccessor {
	t.Helper()
	f := newFailoverWorld(t)
	s := &skewedSuccessor{failoverWorld: f, b: f.member(memoryConfig(), 15*time.Minute)}
	s.a = f.promote(f.member(memoryConfig(), 0))
	s.propose(s.a, func(now time.Time) ledger.Command {
		c := &ledger.Register{Now: now, Edge: "edge-a", Policy: memoryPolicy()}
		for _, id := range ids {
			c.Nodes = append(c.Nodes, ledger.RegisterNode{Identity: id, Region: "eu"})
		}
		return c
	})
	return s
}

// propose proposes the command cmd builds from m's ledger time, as the coordinator's handlers do.
func (s *skewedSuccessor) propose(m *Manager, cmd func(now time.Time) ledger.Command) any {
	s.t.Helper()
	res, err := s.d.propose(context.Background(), cmd(stampOf(s.t, m)))
	if err != nil {
		s.t.Fatal(err)
	}
	return res
}

// failover deposes A and, a second later, promotes B.
func (s *skewedSuccessor) failover() {
	s.t.Helper()
	s.a.Disable()
	s.world.Advance(time.Second)
	s.promote(s.b)
}

func (s *skewedSuccessor) acquire(m *Manager, edge, requestID string) *ledger.Lease {
	s.t.Helper()
	got, err := m.Acquire(context.Background(), Request{Edge: edge, Region: "eu", RequestID: requestID, MaxNodes: 10})
	if err != nil {
		s.t.Fatal(err)
	}
	return got.Lease
}

func (s *skewedSuccessor) report(m *Manager, ls *ledger.Lease, requestID string, o api.Outcome, ids ...string) (*ledger.ReportResult, error) {
	var rs []ledger.Result
	for _, id := range ids {
		rs = append(rs, ledger.Result{Identity: id, Outcome: o, Error: map[bool]string{true: "inventory failed"}[o == api.OutcomeFailed]})
	}
	return m.Report(context.Background(), Ref{ID: ls.ID, Token: ls.Token, Edge: ls.Edge, Region: ls.Region}, requestID, rs)
}

// reported is report for a report the scenario needs applied: it fails the test if m refuses it.
func (s *skewedSuccessor) reported(m *Manager, ls *ledger.Lease, requestID string, o api.Outcome, ids ...string) {
	s.t.Helper()
	if _, err := s.report(m, ls, requestID, o, ids...); err != nil {
		s.t.Fatal(err)
	}
}

// TestManager_ReportAnswerSurvivesAFailoverToALeaderFarAhead: a report applied on A whose answer
// was lost is retried seconds after B, 15 minutes ahead, took over and applied another report
// (which forgets the answers older than ReportMemory): the retry gets its first answer.
func TestManager_ReportAnswerSurvivesAFailoverToALeaderFarAhead(t *testing.T) {
	s := newSkewedSuccessor(t, "n1")
	l1 := s.acquire(s.a, "edge-a", "q1")
	s.reported(s.a, l1, "r1", api.OutcomeProvisioned, "n1")
	s.failover()
	s.propose(s.b, func(now time.Time) ledger.Command {
		return &ledger.Register{Now: now, Edge: "edge-b", Policy: memoryPolicy(), Nodes: []ledger.RegisterNode{{Identity: "n2", Region: "eu"}}}
	})
	l2 := s.acquire(s.b, "edge-b", "q2")
	s.reported(s.b, l2, "r2", api.OutcomeProvisioned, "n2")
	s.world.Advance(2 * time.Second)
	again, err := s.report(s.b, l1, "r1", api.OutcomeProvisioned, "n1")
	if err != nil || !again.Replayed || !slices.Equal(again.Applied, []string{"n1"}) {
		t.Fatalf("retried report after the failover: %+v, %v; want its first answer", again, err)
	}
}

// TestManager_RetryAnswerSurvivesAFailoverToALeaderFarAhead: the operator's retry, applied on A
// and sent again after B (15 minutes ahead) took over and remembered another answer, is answered
// with the nodes it moved, not refused because they wait now.
func TestManager_RetryAnswerSurvivesAFailoverToALeaderFarAhead(t *testing.T) {
	s := newSkewedSuccessor(t, "n1", "n2")
	l1 := s.acquire(s.a, "edge-a", "q1")
	s.reported(s.a, l1, "", api.OutcomeDeferred, "n1", "n2")
	retry := func(m *Manager) any {
		return s.propose(m, func(now time.Time) ledger.Command {
			return &ledger.Retry{Now: now, By: "operator", Policy: memoryPolicy(), Nodes: []string{"n1"}, RequestID: "op1", Keep: 15 * time.Minute}
		})
	}
	if r, ok := retry(s.a).(*ledger.RetryResult); !ok || len(r.Retried) != 1 {
		t.Fatalf("retry on A: %+v", r)
	}
	s.failover()
	s.propose(s.b, func(now time.Time) ledger.Command {
		return &ledger.Retry{Now: now, By: "operator", Policy: memoryPolicy(), Nodes: []string{"n2"}, RequestID: "op2", Keep: 15 * time.Minute}
	})
	s.world.Advance(2 * time.Second)
	if r, ok := retry(s.b).(*ledger.RetryResult); !ok || len(r.Retried) != 1 || r.Retried[0].Identity != "n1" {
		t.Fatalf("retry sent again after the failover: %+v; want n1 answered as moved", retry(s.b))
	}
}

// TestManager_ReprovisionGuardSurvivesAFailoverToALeaderFarAhead: a sweep that ran before a
// node's result lists it seconds after B (15 minutes ahead) took over; reprovision_after (a
// minute) still keeps the node provisioned.
func TestManager_ReprovisionGuardSurvivesAFailoverToALeaderFarAhead(t *testing.T) {
	s := newSkewedSuccessor(t, "n1")
	l1 := s.acquire(s.a, "edge-a", "q1")
	s.reported(s.a, l1, "r1", api.OutcomeProvisioned, "n1")
	s.failover()
	s.world.Advance(2 * time.Second)
	r := s.propose(s.b, func(now time.Time) ledger.Command {
		return &ledger.Register{Now: now, Edge: "edge-a", Policy: memoryPolicy(), Nodes: []ledger.RegisterNode{{Identity: "n1", Region: "eu"}}}
	}).(*ledger.RegisterResult)
	if r.Requeued != 0 {
		t.Fatalf("a stale sighting 3 s after the node's result requeued it: %+v", r)
	}
}

// TestManager_WithheldNodeStaysWithheldAfterAFailoverToALeaderFarAhead: what A decided keeps
// node n1 from an edge seconds after B (15 minutes ahead) took over. LockWindow: edge-a's lease
// expired on A, so go-choria holds the node's lock for edge-a two minutes; edge-b is not granted
// it. Backoff: the node failed on A and waits its minute of backoff; edge-a is not granted it again.
func TestManager_WithheldNodeStaysWithheldAfterAFailoverToALeaderFarAhead(t *testing.T) {
	for _, c := range []struct {
		name string
		// onA ends edge-a's lease l1 on A.
		onA  func(t *testing.T, s *skewedSuccessor, l1 *ledger.Lease)
		edge string
		want string
	}{
		{"LockWindow", func(t *testing.T, s *skewedSuccessor, l1 *ledger.Lease) {
			s.world.Advance(36 * time.Second)
			if err := s.a.ExpireDue(context.Background()); err != nil {
				t.Fatal(err)
			}
			if _, err := s.l.Lease(l1.ID); !errors.Is(err, ledger.ErrUnknownLease) {
				t.Fatalf("lease %s not expired on A: %v", l1.ID, err)
			}
		}, "edge-b", "inside edge-a's lock window"},
		{"Backoff", func(t *testing.T, s *skewedSuccessor, l1 *ledger.Lease) {
			s.reported(s.a, l1, "r1", api.OutcomeFailed, "n1")
		}, "edge-a", "again 3 s into a minute's backoff"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSkewedSuccessor(t, "n1")
			c.onA(t, s, s.acquire(s.a, "edge-a", "q1"))
			s.failover()
			s.world.Advance(2 * time.Second)
			if ls := s.acquire(s.b, c.edge, "q2"); ls != nil {
				t.Fatalf("%s granted %v %s", c.edge, ls.Nodes, c.want)
			}
		})
	}
}

// TestManager_AcquireAnswerSurvivesAFailoverToALeaderFarAhead: an acquire granted on A whose
// answer was lost is retried after B (15 minutes ahead) took over: the same lease answers it.
func TestManager_AcquireAnswerSurvivesAFailoverToALeaderFarAhead(t *testing.T) {
	s := newSkewedSuccessor(t, "n1")
	l1 := s.acquire(s.a, "edge-a", "q1")
	s.failover()
	s.world.Advance(2 * time.Second)
	if again := s.acquire(s.b, "edge-a", "q1"); again == nil || again.ID != l1.ID || again.Token != l1.Token {
		t.Fatalf("retried acquire after the failover: %+v, want lease %s token %d", again, l1.ID, l1.Token)
	}
}

// stampOf is m's ledger time for a command.
func stampOf(t *testing.T, m *Manager) time.Time {
	t.Helper()
	now, err := m.Stamp()
	if err != nil {
		t.Fatal(err)
	}
	return now
}

// TestManager_NoStampWithoutAnEstablishedLeadership: a member has ledger time only while its
// leadership is established: not before its promotion's extend has committed, and not after it
// was deposed, whatever its wall clock says (a step of +40 s here). A stamp of the wall clock
// would become the ledger's latest and shorten every lease at the next promotion.
func TestManager_NoStampWithoutAnEstablishedLeadership(t *testing.T) {
	f := newFailoverWorld(t)
	var m *Manager
	var during error
	propose := func(ctx context.Context, cmd ledger.Command) (any, error) {
		if _, ok := cmd.(*ledger.Extend); ok {
			_, during = m.Stamp()
		}
		return f.d.propose(ctx, cmd)
	}
	clock := f.world.Clock(0, 0)
	m, err := New(memoryConfig(), f.l, propose, clock, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Stamp(); !errors.Is(err, ErrDisabled) {
		t.Fatalf("stamp before the promotion: %v, want ErrDisabled", err)
	}
	if err := m.Enable(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(during, ErrDisabled) {
		t.Fatalf("stamp while the promotion's extend was proposed: %v, want ErrDisabled", during)
	}
	first := stampOf(t, m)
	m.Disable()
	clock.Step(40 * time.Second)
	if at, err := m.Stamp(); !errors.Is(err, ErrDisabled) {
		t.Fatalf("stamp after the leadership ended: %v (%v), want ErrDisabled", at, err)
	}
	// Led again, it stamps from the ledger's time, not its stepped wall clock.
	f.world.Advance(time.Second)
	if err := m.Enable(context.Background()); err != nil {
		t.Fatal(err)
	}
	if at := stampOf(t, m); at.Sub(first) > 2*time.Second {
		t.Fatalf("stamp %v after a 1 s re-election from %v: the wall clock's step entered ledger time", at, first)
	}
	m.Disable()
}
