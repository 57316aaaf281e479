// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/seed96588659/muster/pkg/testkit"
)

// TestLedger_UnknownCommandHaltsBeforeApplyingAnything: an entry of a type this member does not
// know, without the ignorable flag, stops the member (as Nomad and Consul do) before anything of
// its batch is applied, with a log line naming the type and index. Refusing it and moving on
// would let this older member silently diverge and perhaps lead later.
func TestLedger_UnknownCommandHaltsBeforeApplyingAnything(t *testing.T) {
	h, logs := newLoggedHarness(t)
	l := h.l
	h.register(t0, "eu", "a")
	reg := h.entry(&Register{Now: t0, Policy: testPolicy(), Nodes: []RegisterNode{{Identity: "b", Region: "eu"}}})
	h.index++
	unknown := &raft.Log{Index: h.index, Term: 1, Type: raft.LogCommand, Data: []byte{0x2a, '{', '}'}}

	h.applyHalting("an unknown command without the ignorable flag", reg, unknown)
	if s := logs.String(); !strings.Contains(s, "type=42") || !strings.Contains(s, "index=3") {
		t.Fatalf("log does not name the type and index: %s", s)
	}
	// An ignorable unknown command is skipped; its batch-mates apply.
	h.index = reg.Index
	ign := &raft.Log{Index: reg.Index + 1, Term: 1, Type: raft.LogCommand, Data: []byte{byte(0x2a | IgnoreUnknown), '{', '}'}}
	l.ApplyLogs([]*raft.Log{reg, ign})
	if idx, _, _ := l.AppliedIndex(); idx != ign.Index {
		t.Fatalf("applied index %d after an ignorable unknown command, want %d", idx, ign.Index)
	}
}

// newLoggedHarness is a protocol 1 ledger (no SetProtocol applied) whose log the test reads.
func newLoggedHarness(t *testing.T) (*harness, *testkit.LogBuffer) {
	t.Helper()
	logs := &testkit.LogBuffer{}
	return openHarness(t, Options{Logger: slog.New(slog.NewTextHandler(logs, nil))}), logs
}
