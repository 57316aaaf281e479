// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/seed96588659/muster/pkg/api"
)

var t0 = time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)

func testPolicy() Policy {
	return Policy{
		MaxAttempts: 3, BackoffBase: time.Second, BackoffMax: 4 * time.Second,
		LockWindow: 2 * time.Minute, HistoryLimit: 5, ReprovisionAfter: 30 * time.Second,
	}
}

// harness feeds commands to a real ledger file as a Raft log would, one index per command;
// newHarness's ledger runs the newest cluster protocol.
type harness struct {
	t     testing.TB
	l     *Ledger
	index uint64
	term  uint64
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	h := openHarness(t, Options{})
	// As the leader of a cluster of this build does first (coordinator/protocol.go).
	mustResult[*ProtocolResult](t, h.apply(&SetProtocol{Version: Protocol}))
	return h
}

// openHarness is a fresh ledger opened with opts, as one written before cluster protocols
// existed: no SetProtocol applied, so it runs protocol 1.
func openHarness(t testing.TB, opts Options) *harness {
	t.Helper()
	l, err := Open(filepath.Join(t.TempDir(), "ledger.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return &harness{t: t, l: l, term: 1}
}

func (h *harness) entry(cmd Command) *raft.Log {
	h.t.Helper()
	data, err := EncodeCommand(cmd)
	if err != nil {
		h.t.Fatal(err)
	}
	h.index++
	return &raft.Log{Index: h.index, Term: h.term, Type: raft.LogCommand, Data: data}
}

func (h *harness) apply(cmd Command) any {
	h.t.Helper()
	return h.l.ApplyLogs([]*raft.Log{h.entry(cmd)})[0]
}

// applyHalting applies batch, which must halt the member (what names the entry that should),
// and fails unless the halt came before anything of the batch: the applied index short of its
// first entry and the digest unchanged. It returns what the member panicked with.
func (h *harness) applyHalting(what string, batch ...*raft.Log) any {
	h.t.Helper()
	before, _ := h.l.Digest()
	panicked := func() (p any) {
		defer func() { p = recover() }()
		h.l.ApplyLogs(batch)
		return nil
	}()
	if panicked == nil {
		h.t.Fatalf("%s was applied past", what)
	}
	if idx, _, _ := h.l.AppliedIndex(); idx != batch[0].Index-1 {
		h.t.Fatalf("applied index %d after the halt, want %d (nothing of the batch)", idx, batch[0].Index-1)
	}
	if after, _ := h.l.Digest(); !bytes.Equal(before, after) {
		h.t.Fatal("the ledger changed although the batch halted")
	}
	return panicked
}

// applyAll applies cmds one entry each, as apply does, and returns their results in order.
func (h *harness) applyAll(cmds []Command) []any {
	h.t.Helper()
	results := make([]any, len(cmds))
	for i, c := range cmds {
		results[i] = h.apply(c)
	}
	return results
}

func (h *harness) register(at time.Time, region string, ids ...string) *RegisterResult {
	h.t.Helper()
	c := &Register{Now: at, Edge: "edge-a", Policy: testPolicy()}
	for _, id := range ids {
		c.Nodes = append(c.Nodes, RegisterNode{Identity: id, Region: region})
	}
	return mustResult[*RegisterResult](h.t, h.apply(c))
}

func (h *harness) grant(at time.Time, edge, region string, max int) *Lease {
	h.t.Helper()
	c := &Grant{Now: at, LeaseID: fmt.Sprintf("lease-%d", h.index+1), Edge: edge, Region: region, Max: max, TTL: 30 * time.Second, Policy: testPolicy()}
	return mustResult[*GrantResult](h.t, h.apply(c)).Lease
}

func (h *harness) report(at time.Time, ls *Lease, outcome api.Outcome, ids ...string) any {
	h.t.Helper()
	c := &Report{Now: at, LeaseID: ls.ID, Token: ls.Token, Policy: testPolicy()}
	for _, id := range ids {
		c.Results = append(c.Results, Result{Identity: id, Outcome: outcome, Error: errIf(outcome)})
	}
	return h.apply(c)
}

func errIf(o api.Outcome) string {
	if o == api.OutcomeFailed {
		return "inventory failed"
	}
	return ""
}

func (h *harness) node(id string) *Node {
	h.t.Helper()
	n, err := h.l.Node(id)
	if err != nil {
		h.t.Fatal(err)
	}
	return n
}

func (h *harness) counts() map[string]map[api.NodeState]int {
	h.t.Helper()
	c, err := h.l.Counts()
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

func mustResult[T any](t testing.TB, r any) T {
	t.Helper()
	if err, ok := r.(error); ok {
		t.Fatalf("apply failed: %v", err)
	}
	v, ok := r.(T)
	if !ok {
		t.Fatalf("apply returned %T (%v), want %T", r, r, *new(T))
	}
	return v
}

func mustErr(t testing.TB, r any, want error) {
	t.Helper()
	err, ok := r.(error)
	if !ok {
		t.Fatalf("apply returned %T (%+v), want error %v", r, r, want)
	}
	if !errors.Is(err, want) {
		t.Fatalf("apply error %v, want %v", err, want)
	}
}
