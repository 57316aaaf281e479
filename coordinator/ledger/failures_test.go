// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	bolt "go.etcd.io/bbolt"
)

func (h *harness) failures(limit int) []Failure {
	h.t.Helper()
	f, err := h.l.Failures(limit)
	if err != nil {
		h.t.Fatal(err)
	}
	return f
}

// failureKeys counts the records of the failure index itself, whatever Failures would answer.
func failureKeys(t *testing.T, l *Ledger) int {
	t.Helper()
	n := 0
	if err := l.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketFailures).ForEach(func(_, _ []byte) error { n++; return nil })
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// failMany registers n nodes and fails each once, in reports of 100 results: the i-th failure is
// of node f<i>, with error "e<i>".
func failMany(t *testing.T, h *harness, n int) {
	t.Helper()
	ids := nodeIDs("f", n)
	for start := 0; start < n; start += 1000 {
		h.register(t0, "eu", ids[start:min(start+1000, n)]...)
	}
	ls := h.grant(t0, "edge-a", "eu", n)
	if ls == nil || len(ls.Nodes) != n {
		t.Fatalf("grant of %d: %+v", n, ls)
	}
	for start := 0; start < n; start += 100 {
		c := &Report{Now: t0.Add(time.Duration(start) * time.Millisecond), LeaseID: ls.ID, Token: ls.Token, Policy: testPolicy()}
		for i := start; i < min(start+100, n); i++ {
			c.Results = append(c.Results, Result{Identity: ids[i], Outcome: api.OutcomeFailed, Error: fmt.Sprintf("e%d", i)})
		}
		mustResult[*ReportResult](t, h.apply(c))
	}
}

func readCloser(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }

func nodeIDs(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%05d", prefix, i)
	}
	return out
}

func TestFailures_KeepExactlyTheNewestInOrder(t *testing.T) {
	h := newHarness(t)
	const n = FailureMemory + 137
	failMany(t, h, n)
	if got := failureKeys(t, h.l); got != FailureMemory {
		t.Fatalf("the index holds %d records, want exactly %d", got, FailureMemory)
	}
	all := h.failures(FailureMemory)
	if len(all) != FailureMemory {
		t.Fatalf("Failures(%d) = %d records", FailureMemory, len(all))
	}
	for i, f := range all {
		want := n - 1 - i // newest first
		if f.Identity != fmt.Sprintf("f%05d", want) || f.Error != fmt.Sprintf("e%d", want) {
			t.Fatalf("failure %d is %s %q, want f%05d e%d", i, f.Identity, f.Error, want, want)
		}
	}
	if got := h.failures(3); len(got) != 3 || got[0] != all[0] || got[2] != all[2] {
		t.Errorf("Failures(3) = %+v", got)
	}
	if got := h.failures(0); len(got) != api.DefaultFailures {
		t.Errorf("Failures(0) returned %d, want the default %d", len(got), api.DefaultFailures)
	}
}

// What counts as a failure: a failed attempt, a lock held by another worker, an expired lease,
// an abandon and a gone node; not a release, an upgrade, a deferral or a success.
func TestFailures_RecordAttemptFailuresAbandonsAndGoneNodesWithTheirDetails(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "failed", "lock", "gone", "released", "upgrade", "deferred", "ok", "zexpired")
	ls := h.grant(t0, "edge-a", "eu", 7)
	at := t0.Add(time.Second)
	c := &Report{Now: at, LeaseID: ls.ID, Token: ls.Token, Policy: testPolicy(), Results: []Result{
		{Identity: "failed", Outcome: api.OutcomeFailed, Error: "helper exited 3"},
		{Identity: "lock", Outcome: api.OutcomeLockHeld, Error: "Could not obtain provisioning lock"},
		{Identity: "gone", Outcome: api.OutcomeGone, Error: "no reply"},
		{Identity: "released", Outcome: api.OutcomeReleased},
		{Identity: "upgrade", Outcome: api.OutcomeUpgradeSent},
		{Identity: "deferred", Outcome: api.OutcomeDeferred},
		{Identity: "ok", Outcome: api.OutcomeProvisioned},
	}}
	mustResult[*ReportResult](t, h.apply(c))
	ls2 := h.grant(at, "edge-b", "eu", 1)
	if ls2 == nil || ls2.Nodes[0] != "zexpired" {
		t.Fatalf("grant of expired: %+v", ls2)
	}
	exp := at.Add(time.Hour)
	mustResult[*ExpireResult](t, h.apply(&Expire{Now: exp, Grace: time.Second, Policy: testPolicy(), LeaseIDs: []string{ls2.ID}}))
	got := h.failures(10)
	want := []Failure{
		{At: exp, Identity: "zexpired", Region: "eu", Edge: "edge-b", LeaseID: ls2.ID, State: api.StateWaiting, Attempts: 1, Reason: "lease expired", Error: "lease expired"},
		{At: at, Identity: "gone", Region: "eu", Edge: "edge-a", LeaseID: ls.ID, State: api.StateGone, Reason: goneReason, Error: "no reply"},
		{At: at, Identity: "lock", Region: "eu", Edge: "edge-a", LeaseID: ls.ID, State: api.StateWaiting, Attempts: 1, Reason: "provisioning lock held by another worker", Error: "Could not obtain provisioning lock"},
		{At: at, Identity: "failed", Region: "eu", Edge: "edge-a", LeaseID: ls.ID, State: api.StateWaiting, Attempts: 1, Reason: "failed", Error: "helper exited 3"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("failures:\n got %+v\nwant %+v", got, want)
	}
	// The last attempt abandons: that failure says so.
	abandon(t, h, exp, "failed")
	if f := h.failures(1)[0]; f.Identity != "failed" || f.State != api.StateAbandoned || f.Attempts != 3 || f.Reason != "failed; abandoned after 3 attempts" {
		t.Errorf("abandon: %+v", f)
	}
}

// The page's query reads the index only: with the node records gone from under it, a ledger of
// 20,000 nodes still answers its 3 failures in full. A query that scanned the nodes would find none.
func TestFailures_AnswerFromTheIndexWithoutReadingNodes(t *testing.T) {
	h := newHarness(t)
	ids := nodeIDs("n", 20_000)
	for start := 0; start < len(ids); start += 1000 {
		h.register(t0, "eu", ids[start:start+1000]...)
	}
	ls := h.grant(t0, "edge-a", "eu", 3)
	mustResult[*ReportResult](t, h.report(t0, ls, api.OutcomeFailed, ls.Nodes...))
	if err := h.l.db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketNodes); err != nil {
			return err
		}
		_, err := tx.CreateBucket(bucketNodes)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if nodes, _, err := h.l.Nodes(NodeFilter{}); err != nil || len(nodes) != 0 {
		t.Fatalf("the node records are still there: %d %v", len(nodes), err)
	}
	got := h.failures(50)
	if len(got) != 3 {
		t.Fatalf("%d failures, want 3: %+v", len(got), got)
	}
	for i, f := range got {
		if f.Identity != ls.Nodes[2-i] || f.Error != "inventory failed" || f.Region != "eu" || f.Edge != "edge-a" {
			t.Errorf("failure %d: %+v", i, f)
		}
	}
}

func TestFailures_SurviveSnapshotAndRestoreAndGoOnIdentically(t *testing.T) {
	h := newHarness(t)
	failMany(t, h, FailureMemory+20)
	snap := persist(t, h.l)
	other := newHarness(t)
	if err := other.l.Restore(readCloser(snap)); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(other.failures(FailureMemory), h.failures(FailureMemory)) {
		t.Fatal("failures differ after restore")
	}
	// Both go on from the same sequence: further failures keep them identical.
	other.index = h.index
	ids := []string{"x1", "x2"}
	for _, hh := range []*harness{h, other} {
		hh.register(t0.Add(time.Hour), "us", ids...)
		ls := hh.grant(t0.Add(time.Hour), "edge-u", "us", 2)
		mustResult[*ReportResult](t, hh.report(t0.Add(time.Hour), ls, api.OutcomeFailed, ids...))
	}
	if !bytes.Equal(digest(t, h.l), digest(t, other.l)) {
		t.Error("ledgers differ after the same commands following a restore")
	}
	if got := other.failures(2); got[0].Identity != "x2" || got[1].Identity != "x1" || failureKeys(t, other.l) != FailureMemory {
		t.Errorf("after restore and more failures: %+v, %d kept", got, failureKeys(t, other.l))
	}
}

// A snapshot of a member from before the index has no failures bucket: it restores, and the
// index starts empty and fills from there.
func TestFailures_ASnapshotWithoutTheIndexRestores(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a")
	if err := h.l.db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketFailures) }); err != nil {
		t.Fatal(err)
	}
	snap := persist(t, h.l)
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	if err := l.Restore(readCloser(snap)); err != nil {
		t.Fatalf("restore of a snapshot without the failure index: %v", err)
	}
	other := &harness{t: t, l: l, term: 1, index: h.index}
	if got := other.failures(5); len(got) != 0 {
		t.Fatalf("failures after restore: %+v", got)
	}
	ls := other.grant(t0, "edge-a", "eu", 1)
	mustResult[*ReportResult](t, other.report(t0, ls, api.OutcomeFailed, "a"))
	if got := other.failures(5); len(got) != 1 || got[0].Identity != "a" {
		t.Errorf("failures after restore and one failure: %+v", got)
	}
}
