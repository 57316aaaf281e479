// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/seed96588659/muster/pkg/api"
)

// persist takes a snapshot through a real raft file snapshot store and returns its bytes.
func persist(t *testing.T, l *Ledger) []byte {
	t.Helper()
	store, err := raft.NewFileSnapshotStore(t.TempDir(), 1, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	_, rc, err := store.Open(persistTo(t, l, store).ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// persistTo takes a snapshot of l into store, as raft does, and returns its meta (the newest).
func persistTo(t testing.TB, l *Ledger, store *raft.FileSnapshotStore) *raft.SnapshotMeta {
	t.Helper()
	snap, err := l.FSM().Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	idx, term, _ := l.AppliedIndex()
	sink, err := store.Create(raft.SnapshotVersionMax, idx, term, raft.Configuration{}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	metas, err := store.List()
	if err != nil || len(metas) == 0 {
		t.Fatalf("list snapshots: %v", err)
	}
	return metas[0]
}

func digest(t *testing.T, l *Ledger) []byte {
	t.Helper()
	d, err := l.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestLedger_SnapshotRestoreRoundTrip(t *testing.T) {
	src := newHarness(t)
	src.register(t0, "eu", "a", "b", "c")
	ls := src.grant(t0, "e", "eu", 2)
	src.report(t0, ls, api.OutcomeProvisioned, ls.Nodes[0])
	src.apply(&Pause{Now: t0, Paused: true, By: "ops"})
	data := persist(t, src.l)

	// Apply after the snapshot was pinned: the snapshot must not see it.
	src.register(t0, "eu", "late")

	dst := newHarness(t)
	dst.register(t0, "us", "stale-1", "stale-2")
	if err := dst.l.FSM().Restore(io.NopCloser(bytes.NewReader(data))); err != nil {
		t.Fatal(err)
	}
	if _, err := dst.l.Node("stale-1"); err == nil {
		t.Fatal("restore kept state that was not in the snapshot")
	}
	if _, err := dst.l.Node("late"); err == nil {
		t.Fatal("snapshot holds a write applied after it was taken")
	}
	if idx, _, _ := dst.l.AppliedIndex(); idx != 5 {
		t.Fatalf("restored applied index %d, want 5 (SetProtocol and 4 commands)", idx)
	}
	if p, _ := dst.l.Pause(); !p.Paused {
		t.Fatal("pause flag lost in the round trip")
	}
	if c, _ := dst.l.Counts(); c["eu"][api.StateLeased] != 1 || c["eu"][api.StateProvisioned] != 1 || c["eu"][api.StateWaiting] != 1 || len(c["us"]) != 0 {
		t.Fatalf("restored counts %v", c)
	}

	// Both continue identically from the snapshot's index.
	ref := newHarness(t)
	if err := ref.l.FSM().Restore(io.NopCloser(bytes.NewReader(data))); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(digest(t, ref.l), digest(t, dst.l)) {
		t.Fatal("two restores of one snapshot differ")
	}
	ref.index, dst.index = 4, 4
	for _, h := range []*harness{ref, dst} {
		h.apply(&Pause{Now: t0, Paused: false})
		h.register(t0, "eu", "d")
	}
	if !bytes.Equal(digest(t, ref.l), digest(t, dst.l)) {
		t.Fatal("restored ledgers diverged on the same log")
	}
}

func TestLedger_RestoreOfGarbageKeepsOldState(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a")
	before := digest(t, h.l)
	err := h.l.Restore(io.NopCloser(strings.NewReader("this is not a bbolt file")))
	if err == nil {
		t.Fatal("restore accepted garbage")
	}
	if !bytes.Equal(before, digest(t, h.l)) {
		t.Fatal("failed restore changed the ledger")
	}
}

// randomLog builds a plausible log: registrations, grants, renewals, reports, expiries, extends
// and pauses, with times that only move forward, as a leader would stamp them.
func randomLog(seed uint64, n int) []Command {
	rng := rand.New(rand.NewPCG(seed, seed))
	now := t0
	var cmds []Command
	regions := []string{"eu", "us", "ap"}
	edges := []string{"e1", "e2", "e3"}
	leaseN := 0
	var grants []string
	for len(cmds) < n {
		now = now.Add(time.Duration(rng.IntN(20000)) * time.Millisecond)
		switch k := rng.IntN(10); {
		case k < 3:
			c := &Register{Now: now, Policy: testPolicy()}
			for range rng.IntN(20) + 1 {
				c.Nodes = append(c.Nodes, RegisterNode{Identity: fmt.Sprintf("n%03d", rng.IntN(300)), Region: regions[rng.IntN(3)], InventoryVersion: fmt.Sprint(rng.IntN(3))})
			}
			cmds = append(cmds, c)
		case k < 6:
			leaseN++
			id := fmt.Sprintf("L%d", leaseN)
			grants = append(grants, id)
			cmds = append(cmds, &Grant{Now: now, LeaseID: id, Edge: edges[rng.IntN(3)], Region: regions[rng.IntN(3)], Max: rng.IntN(8) + 1, TTL: 30 * time.Second, Policy: testPolicy()})
		case k < 7:
			cmds = append(cmds, &Expire{Now: now, Grace: time.Second, Policy: testPolicy(), LeaseIDs: grants})
		case k < 8:
			cmds = append(cmds, &Extend{Now: now, By: time.Second})
		case k < 9:
			cmds = append(cmds, &Pause{Now: now, Paused: rng.IntN(4) == 0})
		default:
			// Reports reference node ids by guess; the FSM fences the wrong ones.
			c := &Report{Now: now, Policy: testPolicy(), Results: []Result{{Identity: fmt.Sprintf("n%03d", rng.IntN(300)), Outcome: []api.Outcome{api.OutcomeProvisioned, api.OutcomeFailed, api.OutcomeLockHeld, api.OutcomeDeferred}[rng.IntN(4)]}}}
			if len(grants) > 0 {
				c.LeaseID = grants[rng.IntN(len(grants))]
			}
			cmds = append(cmds, c)
		}
	}
	return cmds
}

// TestLedger_DeterministicAcrossMembers feeds one log to two ledgers, one entry at a time and in
// uneven batches, with report tokens taken from the first: both end with identical content.
func TestLedger_DeterministicAcrossMembers(t *testing.T) {
	a, b := newHarness(t), newHarness(t)
	cmds := randomLog(7, 600)
	var pending []*raft.Log
	tokens := map[string]uint64{}
	grantedAny := false
	for i, c := range cmds {
		if r, ok := c.(*Report); ok {
			r.Token = tokens[r.LeaseID]
		}
		lg := a.entry(c)
		res := a.l.ApplyLogs([]*raft.Log{lg})[0]
		if g, ok := res.(*GrantResult); ok && g.Lease != nil {
			tokens[g.Lease.ID] = g.Lease.Token
			grantedAny = true
		}
		pending = append(pending, lg)
		if i%7 == 0 || i == len(cmds)-1 {
			b.l.ApplyLogs(pending)
			pending = nil
		}
	}
	if !grantedAny {
		t.Fatal("random log granted nothing; the test would prove little")
	}
	if !bytes.Equal(digest(t, a.l), digest(t, b.l)) {
		t.Fatal("ledgers fed the same log differ")
	}
	na, _, _ := a.l.Nodes(NodeFilter{WithHistory: true, Limit: 10000})
	nb, _, _ := b.l.Nodes(NodeFilter{WithHistory: true, Limit: 10000})
	if fmt.Sprint(na) != fmt.Sprint(nb) || len(na) == 0 {
		t.Fatalf("node listings differ or are empty (%d, %d)", len(na), len(nb))
	}
}

// TestLedger_TimeComesOnlyFromCommands applies a log stamped in 2001 now; every time in the
// ledger is one the commands carried, none is the wall clock.
func TestLedger_TimeComesOnlyFromCommands(t *testing.T) {
	h := newHarness(t)
	for _, c := range randomLog(11, 300) {
		h.apply(c)
	}
	nodes, _, err := h.l.Nodes(NodeFilter{WithHistory: true, Limit: 10000})
	if err != nil || len(nodes) == 0 {
		t.Fatalf("nodes: %d, %v", len(nodes), err)
	}
	limit := t0.Add(24 * 365 * time.Hour)
	check := func(what string, at time.Time) {
		if !at.IsZero() && (at.Before(t0) || at.After(limit)) {
			t.Fatalf("%s = %s: not derived from command times", what, at)
		}
	}
	for _, n := range nodes {
		check(n.Identity+" discovered_at", n.DiscoveredAt)
		check(n.Identity+" not_before", n.NotBefore)
		check(n.Identity+" finished_at", n.FinishedAt)
		for _, tr := range n.History {
			check(n.Identity+" history", tr.At)
		}
	}
	leases, _ := h.l.Leases()
	for _, ls := range leases {
		check(ls.ID+" expires_at", ls.ExpiresAt)
	}
}

func TestLedger_FileIsReopenedIntact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, l: l, term: 1}
	h.register(t0, "eu", "a", "b")
	h.grant(t0, "e", "eu", 1)
	want := digest(t, l)
	l.Close()
	l2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if !bytes.Equal(want, digest(t, l2)) {
		t.Fatal("reopened ledger differs")
	}
}
