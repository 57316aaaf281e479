// SPDX-License-Identifier: Apache-2.0

package edgecalls_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/seed96588659/muster/coordinator/edgecalls"
	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/coordinator/lessor"
	"github.com/seed96588659/muster/pkg/api"
)

// soleMember is a one-member cluster as the calls see it: every command is committed at once
// into a real ledger file, as its own log entry.
type soleMember struct {
	mu    sync.Mutex
	l     *ledger.Ledger
	mgr   *lessor.Manager
	index uint64
}

type fixedClock struct{ start time.Time }

func (c fixedClock) Now() time.Time                                   { return c.start }
func (c fixedClock) Monotonic() time.Duration                         { return time.Since(c.start) }
func (m *soleMember) LeaderOnly() error                               { return nil }
func (m *soleMember) Stamp() (time.Time, error)                       { return m.mgr.Stamp() }
func (m *soleMember) LeaseErr(err error) error                        { return err }
func (m *soleMember) Ledger() *ledger.Ledger                          { return m.l }
func (m *soleMember) Leases() *lessor.Manager                         { return m.mgr }
func (m *soleMember) ConfirmLeadership(context.Context, string) error { return nil }

func (m *soleMember) Propose(_ context.Context, cmd ledger.Command) (any, error) {
	data, err := ledger.EncodeCommand(cmd)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.index++
	res := m.l.ApplyLogs([]*raft.Log{{Index: m.index, Term: 1, Type: raft.LogCommand, Data: data}})[0]
	if err, ok := res.(error); ok {
		return nil, err
	}
	return res, nil
}

func newSoleMember(t *testing.T) *soleMember {
	t.Helper()
	l, err := ledger.Open(filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	m := &soleMember{l: l}
	if _, err := m.Propose(context.Background(), &ledger.SetProtocol{Version: ledger.Protocol}); err != nil {
		t.Fatal(err)
	}
	policy := ledger.DefaultPolicy()
	policy.ReprovisionAfter = 0 // a provisioned node seen again is requeued (or held) at once
	cfg := lessor.Config{TTL: 30 * time.Second, Grace: 5 * time.Second, MaxNodes: 100, MaxWait: time.Second,
		ExpiryInterval: time.Hour, Recheck: time.Hour, Policy: policy}
	if m.mgr, err = lessor.New(cfg, l, m.Propose, fixedClock{start: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := m.mgr.Enable(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.mgr.Disable)
	return m
}

// TestCalls_RegisterStampsTheApprovalPolicy: the calls stamp their member's approval policy into
// each registration: with approval.manual on eu, eu's first-seen nodes are held and us's wait;
// with reprovision hold a provisioned node seen again is held; calls of a member without a policy
// hold nothing; a duplicate responder's report holds its node whatever the policy.
func TestCalls_RegisterStampsTheApprovalPolicy(t *testing.T) {
	m := newSoleMember(t)
	ctx := context.Background()
	policy := &ledger.Approval{Manual: []string{"eu"}, ReprovisionHold: true}
	held := edgecalls.New(m, edgecalls.Options{Approval: policy})
	plain := edgecalls.New(m, edgecalls.Options{})
	state := func(id string) api.NodeState {
		t.Helper()
		n, err := m.l.Node(id)
		if err != nil {
			t.Fatal(err)
		}
		return n.State
	}
	reg := func(c *edgecalls.Calls, region string, ids ...string) api.RegisterResponse {
		t.Helper()
		req := api.RegisterRequest{Region: region, Edge: "edge-" + region}
		for _, id := range ids {
			req.Nodes = append(req.Nodes, api.RegisterNode{Identity: id})
		}
		r, err := c.Register(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := reg(held, "eu", "eu-1"); r.Added != 1 || !slices.Equal(r.Final, []string{"eu-1"}) || state("eu-1") != api.StateHeld {
		t.Fatalf("eu-1 under approval.manual eu: %+v, %s", r, state("eu-1"))
	}
	reg(held, "us", "us-1", "us-2")
	reg(plain, "eu", "eu-2")
	if state("us-1") != api.StateWaiting || state("eu-2") != api.StateWaiting {
		t.Fatalf("us-1 %s, eu-2 (no policy) %s: want waiting", state("us-1"), state("eu-2"))
	}

	acq, err := held.Acquire(ctx, api.AcquireRequest{Edge: "edge-us", Region: "us", MaxNodes: 2})
	if err != nil || acq.Lease == nil || len(acq.Lease.Nodes) != 2 {
		t.Fatalf("acquire: %+v %v", acq, err)
	}
	dup := api.DuplicateResponderPrefix + " a second responder answered jwt for us-2; nothing it returned is used"
	if _, err := held.Report(ctx, api.ReportRequest{LeaseID: acq.Lease.ID, Token: acq.Lease.Token, Edge: "edge-us", Region: "us", Results: []api.NodeResult{
		{Identity: "us-1", Outcome: api.OutcomeProvisioned}, {Identity: "us-2", Outcome: api.OutcomeFailed, Error: dup},
	}}); err != nil {
		t.Fatal(err)
	}
	if state("us-1") != api.StateProvisioned || state("us-2") != api.StateHeld {
		t.Fatalf("after the report: us-1 %s, us-2 %s", state("us-1"), state("us-2"))
	}
	// Seen again: held, with when and by which edge it was provisioned.
	if r := reg(held, "us", "us-1"); r.Requeued != 0 || state("us-1") != api.StateHeld {
		t.Fatalf("us-1 seen again under reprovision hold: %+v, %s", r, state("us-1"))
	}
	n, err := m.l.Node("us-1")
	if err != nil || n.HoldReason != api.HoldReprovision || n.HoldEdge != "edge-us" {
		t.Fatalf("us-1: %+v %v", n, err)
	}
}

// TestCalls_HeldNodesCountTowardsTheFirstSeenCap: under approval.manual a region's first-seen
// nodes wait held, and they count towards register.max_first_seen, so invented identities cannot
// fill the queue without bound.
func TestCalls_HeldNodesCountTowardsTheFirstSeenCap(t *testing.T) {
	m := newSoleMember(t)
	calls := edgecalls.New(m, edgecalls.Options{Approval: &ledger.Approval{Manual: []string{ledger.AnyRegion}}, MaxFirstSeen: 2})
	req := api.RegisterRequest{Region: "eu", Edge: "edge-eu", Nodes: []api.RegisterNode{{Identity: "a"}, {Identity: "b"}, {Identity: "c"}}}
	r, err := calls.Register(context.Background(), req)
	if err != nil || r.Added != 2 || len(r.Rejected) != 1 || r.Rejected[0].Identity != "c" || !strings.Contains(r.Rejected[0].Reason, "held for approval") {
		t.Fatalf("3 new identities, cap 2, all held: %+v %v", r, err)
	}
}
