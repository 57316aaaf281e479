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

	"github.com/hashicorp/raft"
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

// applyBoth applies cmd to a and b at the same log index (the next of a's), as raft would to two
// members, and returns a's result.
func applyBoth(a, b *harness, cmd Command) any {
	a.t.Helper()
	lg := a.entry(cmd)
	b.index = a.index
	rb := b.l.ApplyLogs([]*raft.Log{lg})[0]
	ra := a.l.ApplyLogs([]*raft.Log{lg})[0]
	if !reflect.DeepEqual(ra, rb) {
		a.t.Fatalf("index %d: the two ledgers answered %+v and %+v", lg.Index, ra, rb)
	}
	return ra
}

// failBoth registers n nodes named prefix<i> on a and b, grants them to one lease and fails them
// in reports of 100 results.
func failBoth(t *testing.T, a, b *harness, prefix string, n int) {
	t.Helper()
	ids := nodeIDs(prefix, n)
	reg := &Register{Now: t0, Edge: "edge-a", Policy: testPolicy()}
	for _, id := range ids {
		reg.Nodes = append(reg.Nodes, RegisterNode{Identity: id, Region: prefix})
	}
	mustResult[*RegisterResult](t, applyBoth(a, b, reg))
	g := &Grant{Now: t0, LeaseID: "lease-" + prefix, Edge: "edge-a", Region: prefix, Max: n, TTL: time.Minute, Policy: testPolicy()}
	ls := mustResult[*GrantResult](t, applyBoth(a, b, g)).Lease
	for start := 0; start < n; start += 100 {
		c := &Report{Now: t0.Add(time.Second), LeaseID: ls.ID, Token: ls.Token, Policy: testPolicy()}
		for _, id := range ids[start:min(start+100, n)] {
			c.Results = append(c.Results, Result{Identity: id, Outcome: api.OutcomeFailed, Error: "e-" + id})
		}
		mustResult[*ReportResult](t, applyBoth(a, b, c))
	}
}

// failureBucket is the failure index as stored: every key and value in order.
func failureBucket(t *testing.T, l *Ledger) [][2]string {
	t.Helper()
	var out [][2]string
	if err := l.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketFailures).ForEach(func(k, v []byte) error {
			out = append(out, [2]string{string(k), string(v)})
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// reopen closes h's ledger and opens its file again, as a restarted (upgraded) member does.
func reopen(t *testing.T, h *harness) {
	t.Helper()
	path := h.l.Path()
	if err := h.l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	h.l = l
}

// A staggered upgrade: member b ran a build without the failure index until after the first
// failures, so it starts recording later than a. Once FailureMemory newer failures have applied
// to both, they hold the same index under the same keys and their digests agree.
func TestFailures_MembersThatStartedRecordingAtDifferentIndexesConverge(t *testing.T) {
	a, b := newHarness(t), newHarness(t)
	failBoth(t, a, b, "early", 250)
	// b's build had no index: it is created empty when the upgraded build opens the file.
	if err := b.l.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketMeta).Delete([]byte("failure_seq")); err != nil {
			return err
		}
		return tx.DeleteBucket(bucketFailures)
	}); err != nil {
		t.Fatal(err)
	}
	reopen(t, b)
	if len(failureBucket(t, b.l)) != 0 || len(failureBucket(t, a.l)) != 250 {
		t.Fatalf("before: a holds %d failures, b %d", len(failureBucket(t, a.l)), len(failureBucket(t, b.l)))
	}
	failBoth(t, a, b, "late", FailureMemory)
	fa, fb := failureBucket(t, a.l), failureBucket(t, b.l)
	if len(fa) != FailureMemory || !reflect.DeepEqual(fa, fb) {
		t.Fatalf("failure indexes differ: a holds %d, b %d, equal %v", len(fa), len(fb), reflect.DeepEqual(fa, fb))
	}
	if got := a.failures(1)[0].Identity; got != fmt.Sprintf("late%05d", FailureMemory-1) {
		t.Errorf("newest failure %s", got)
	}
	if !bytes.Equal(digest(t, a.l), digest(t, b.l)) {
		t.Error("digests differ although both ledgers hold the same failures")
	}
}

// oldFailureFormat rewrites l's failure index as the build before it was keyed by log index
// wrote it: sequence numbers from first (8B BE) and meta/failure_seq the latest.
func oldFailureFormat(t *testing.T, l *Ledger, first uint64) {
	t.Helper()
	entries := failureBucket(t, l)
	if err := l.db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketFailures); err != nil {
			return err
		}
		b, err := tx.CreateBucket(bucketFailures)
		if err != nil {
			return err
		}
		seq := first
		for _, e := range entries {
			if err := b.Put(putUint(seq), []byte(e[1])); err != nil {
				return err
			}
			seq++
		}
		return tx.Bucket(bucketMeta).Put([]byte("failure_seq"), putUint(seq-1))
	}); err != nil {
		t.Fatal(err)
	}
}

// A snapshot of the build that numbered failures by a per-member sequence restores: its entries
// keep their order behind every failure recorded since, the sequence is gone, and once
// FailureMemory newer failures have applied the member agrees with one that never held them.
func TestFailures_AnOldFormatSnapshotRestoresAndConverges(t *testing.T) {
	src := newHarness(t)
	src.register(t0, "eu", "a", "b", "c")
	ls := src.grant(t0, "edge-a", "eu", 3)
	mustResult[*ReportResult](t, src.report(t0, ls, api.OutcomeFailed, "a", "b", "c"))
	want := src.failures(10)
	current := persist(t, src.l)
	oldFailureFormat(t, src.l, 7775)
	old := persist(t, src.l)

	restored, ref := newHarness(t), newHarness(t)
	if err := restored.l.Restore(readCloser(old)); err != nil {
		t.Fatalf("restore of an old-format snapshot: %v", err)
	}
	if err := ref.l.Restore(readCloser(current)); err != nil {
		t.Fatal(err)
	}
	restored.index, ref.index = src.index, src.index
	if got := restored.failures(10); !reflect.DeepEqual(got, want) {
		t.Fatalf("failures after restore:\n got %+v\nwant %+v", got, want)
	}
	if err := restored.l.view(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketMeta).Get([]byte("failure_seq")); v != nil {
			return fmt.Errorf("meta/failure_seq = %d is still there", getUint(v))
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	mustResult[*RegisterResult](t, applyBoth(restored, ref, &Register{Now: t0, Policy: testPolicy(), Nodes: []RegisterNode{{Identity: "d", Region: "eu"}}}))
	g := mustResult[*GrantResult](t, applyBoth(restored, ref, &Grant{Now: t0, LeaseID: "lease-d", Edge: "edge-a", Region: "eu", Max: 1, TTL: time.Minute, Policy: testPolicy()})).Lease
	mustResult[*ReportResult](t, applyBoth(restored, ref, &Report{Now: t0, LeaseID: g.ID, Token: g.Token, Policy: testPolicy(), Results: []Result{{Identity: "d", Outcome: api.OutcomeFailed}}}))
	if got := restored.failures(10); len(got) != 4 || got[0].Identity != "d" || !reflect.DeepEqual(got[1:], want) {
		t.Fatalf("after one more failure: %+v", got)
	}
	failBoth(t, restored, ref, "late", FailureMemory)
	if !reflect.DeepEqual(failureBucket(t, restored.l), failureBucket(t, ref.l)) || !bytes.Equal(digest(t, restored.l), digest(t, ref.l)) {
		t.Error("the restored member still differs from one that never held the old entries")
	}
}
