// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"bytes"
	"io"
	"testing"
	"time"
)

// TestRestore_KeepsThisMembersRecoverMark: the recover mark is this member's own note, not ledger
// content, so a snapshot restored over its file keeps it. recover writes the mark after raft's
// recover took a snapshot; when the log ended in a configuration entry, the ledger's applied
// index is below that snapshot's, serve restores it at start, and without this the mark was gone:
// the first leader offered nodes at once (TestE2E_RecoverAfterLostQuorum, intermittently).
func TestRestore_KeepsThisMembersRecoverMark(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a")
	snap := persist(t, h.l)
	if err := h.l.MarkRecovered(t0, []string{"c1"}, 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := h.l.Restore(io.NopCloser(bytes.NewReader(snap))); err != nil {
		t.Fatalf("restore: %v", err)
	}
	mark, ok, err := h.l.Recovered()
	if err != nil || !ok || mark.LeaseTTL != 10*time.Minute || len(mark.Peers) != 1 {
		t.Fatalf("recover mark after a restore: %+v %v %v, want the member's mark kept", mark, ok, err)
	}
}
