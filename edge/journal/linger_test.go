// SPDX-License-Identifier: Apache-2.0

package journal

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// Intents that arrive while one lingers share its fsync: with a linger longer than the test,
// a full batch is written at once, with one fsync.
func TestJournal_IntentsThatArriveWhileOneLingersShareItsFsync(t *testing.T) {
	j, _, err := openLingering(filepath.Join(t.TempDir(), "journal"), nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	const n = 256
	errs := make(chan error, n)
	for i := range n {
		go func() {
			errs <- j.Begin(context.Background(), Intent{Node: fmt.Sprintf("n%d", i), Step: "restart", Lease: "l", Token: 1})
		}()
	}
	for range n {
		select {
		case err := <-errs:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a full batch still lingers")
		}
	}
	if got := j.w.syncs.Load(); got != 1 {
		t.Fatalf("%d fsyncs for %d intents that arrived together, want 1", got, n)
	}
}

// Closing the journal writes an intent that lingers, and its Begin returns nil: it is durable.
func TestJournal_CloseWritesALingeringIntent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	j, _, err := openLingering(path, nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// Begin's first half: the request is queued before Close, as a caller's must be.
	reply := make(chan error, 1)
	j.reqs <- req{rec: record{Op: opBegin, Intent: Intent{Node: "a", Step: "restart", Lease: "l", Token: 1}}, reply: reply}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-reply; err != nil {
		t.Fatalf("Begin of an intent written at Close: %v", err)
	}
	if got := j.w.syncs.Load(); got != 1 {
		t.Fatalf("%d fsyncs, want 1", got)
	}
	_, left, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0].Node != "a" {
		t.Fatalf("open intents after Close: %+v, want a's", left)
	}
}
