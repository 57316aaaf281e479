// SPDX-License-Identifier: Apache-2.0

package journal

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// A write that fails leaves the file's state unknown: that intent and every later one are
// refused (nothing may be sent on the promise of a record that may not be there), and Close
// says so.
func TestJournal_AFailedWriteRefusesEveryLaterIntent(t *testing.T) {
	j, _, err := Open(filepath.Join(t.TempDir(), "journal"), nil)
	if err != nil {
		t.Fatal(err)
	}
	in := Intent{Node: "a", Step: "restart", Lease: "L"}
	if err := j.Begin(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	_ = j.w.f.Close() // the disk goes away under the writer, which is idle
	for _, node := range []string{"b", "c"} {
		in.Node = node
		if err := j.Begin(context.Background(), in); err == nil || !strings.Contains(err.Error(), "write") {
			t.Fatalf("Begin(%s) on a broken journal = %v, want the write error", node, err)
		}
	}
	if err := j.Close(); err == nil || !strings.Contains(err.Error(), "write") {
		t.Fatalf("Close of a broken journal = %v, want the write error", err)
	}
}
