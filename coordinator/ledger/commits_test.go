// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"testing"

	"github.com/hashicorp/raft"
)

// A batch of entries is one commit, however many it holds; a batch the ledger holds already
// (replayed after a restart) is none.
func TestLedger_CountsOneCommitPerBatch(t *testing.T) {
	h := newHarness(t)
	before := h.l.Commits()
	batch := []*raft.Log{
		h.entry(&Register{Now: t0, Edge: "e", Policy: testPolicy(), Nodes: []RegisterNode{{Identity: "a", Region: "eu"}}}),
		h.entry(&Register{Now: t0, Edge: "e", Policy: testPolicy(), Nodes: []RegisterNode{{Identity: "b", Region: "eu"}}}),
		h.entry(&Pause{Now: t0, Paused: true, By: "ops"}),
	}
	h.l.ApplyLogs(batch)
	if got := h.l.Commits() - before; got != 1 {
		t.Fatalf("%d commits for a batch of 3 entries, want 1", got)
	}
	h.l.ApplyLogs(batch)
	if got := h.l.Commits() - before; got != 1 {
		t.Fatalf("%d commits after a replayed batch, want still 1", got)
	}
}
