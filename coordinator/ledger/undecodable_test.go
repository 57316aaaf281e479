// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"strings"
	"testing"

	"github.com/hashicorp/raft"
)

// TestLedger_UndecodableCommandHaltsBeforeApplyingAnything: a known command whose body does not
// decode is no refusal. The leader encodes every command from its type, so such an entry is a
// copy corrupted on this member (chaos caught one: a member applied a committed report whose
// bytes in its memory read as a register with trailing garbage, refused it and moved on, and its
// ledger diverged while the entry on its disk was intact). Halting leaves the entry unapplied:
// the member, restarted, reads it again.
func TestLedger_UndecodableCommandHaltsBeforeApplyingAnything(t *testing.T) {
	h, logs := newLoggedHarness(t)
	h.register(t0, "eu", "a")
	reg := h.entry(&Register{Now: t0, Policy: testPolicy(), Nodes: []RegisterNode{{Identity: "b", Region: "eu"}}})
	good := h.entry(&Register{Now: t0, Policy: testPolicy(), Nodes: []RegisterNode{{Identity: "c", Region: "eu"}}})
	torn := &raft.Log{Index: good.Index, Term: good.Term, Type: raft.LogCommand, Data: append(append([]byte(nil), good.Data...), "u\x00\x00"...)}

	h.applyHalting("a register with bytes after its body", reg, torn)
	if s := logs.String(); !strings.Contains(s, "index=3") || !strings.Contains(s, "register") {
		t.Fatalf("log does not name the command and index: %s", s)
	}
	// Read again intact, the entry applies.
	h.l.ApplyLogs([]*raft.Log{reg, good})
	if n, err := h.l.Node("c"); err != nil || n == nil {
		t.Fatalf("node c after the intact entry: %v %v", n, err)
	}
}
