// SPDX-License-Identifier: Apache-2.0

package journal_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge/journal"
)

func intent(node, lease string) journal.Intent {
	return journal.Intent{Node: node, Step: "restart", Lease: lease, Token: 7, Edge: "e1", Region: "eu", At: time.Now().UTC().Truncate(time.Millisecond)}
}

func open(t *testing.T, path string) (*journal.Journal, []journal.Intent) {
	t.Helper()
	j, left, err := journal.Open(path, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	sort.Slice(left, func(a, b int) bool { return left[a].Node < left[b].Node })
	return j, left
}

func TestJournal_OpenIntentsOutliveTheRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "journal")
	j, left := open(t, path)
	if len(left) != 0 {
		t.Fatalf("a new journal has open intents: %v", left)
	}
	ctx := context.Background()
	for _, n := range []string{"a", "b", "c"} {
		if err := j.Begin(ctx, intent(n, "L1")); err != nil {
			t.Fatal(err)
		}
	}
	j.End("b", "L1")
	j.End("c", "L0") // another lease's: c's intent under L1 stays open
	if err := j.Begin(ctx, intent("d", "L2")); err != nil {
		t.Fatal(err)
	}
	// As a kill would leave it: once Begin returned, its record is in the file.
	if data, err := os.ReadFile(path); err != nil || !strings.Contains(string(data), `"op":"begin","node":"d"`) {
		t.Fatalf("after Begin returned the file holds %q (%v), want d's intent", data, err)
	}
	j.Close()
	j2, left := open(t, path)
	defer j2.Close()
	var got []string
	for _, in := range left {
		got = append(got, in.Node+"/"+in.Lease)
	}
	if want := "a/L1 c/L1 d/L2"; strings.Join(got, " ") != want {
		t.Fatalf("open intents after the restart = %v, want %s", got, want)
	}
	if want := intent("a", "L1"); left[0].Token != want.Token || left[0].Edge != "e1" || left[0].Region != "eu" || left[0].Step != "restart" || left[0].At.IsZero() {
		t.Fatalf("intent read back as %+v", left[0])
	}
}

func TestJournal_TornTailIgnoredCorruptLineRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "journal")
	j, _ := open(t, path)
	if err := j.Begin(context.Background(), intent("a", "L1")); err != nil {
		t.Fatal(err)
	}
	j.Close()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(`{"op":"begin","node":"b","st`) // a kill mid-write
	f.Close()
	j, left := open(t, path)
	j.Close()
	if len(left) != 1 || left[0].Node != "a" {
		t.Fatalf("with a torn tail the open intents are %v, want only a", left)
	}

	if err := os.WriteFile(path, []byte("{\"op\":\"begin\",\"node\":\"a\",\"step\":\"restart\",\"lease\":\"L\"}\nnot json\n{\"op\":\"end\",\"node\":\"a\",\"lease\":\"L\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = journal.Open(path, nil)
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("Open of a journal with a corrupt middle line = %v, want an error naming line 2", err)
	}
	if data, _ := os.ReadFile(path); !strings.Contains(string(data), "not json") {
		t.Fatal("a refused journal was rewritten")
	}
	if err := os.WriteFile(path, []byte("{\"op\":\"launch\",\"node\":\"a\",\"lease\":\"L\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := journal.Open(path, nil); err == nil || !strings.Contains(err.Error(), `unknown op "launch"`) {
		t.Fatalf("Open with an unknown op = %v", err)
	}
}

func TestJournal_RefusesAnIncompleteIntent(t *testing.T) {
	j, _ := open(t, filepath.Join(t.TempDir(), "journal"))
	defer j.Close()
	for _, in := range []journal.Intent{{Lease: "L", Step: "restart"}, {Node: "a", Step: "restart"}, {Node: "a", Lease: "L"}} {
		if err := j.Begin(context.Background(), in); err == nil {
			t.Errorf("Begin(%+v) = nil, want an error", in)
		}
	}
}

func TestJournal_ConcurrentWorkersAndCompaction(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	j, _ := open(t, path)
	const workers, each = 16, 400 // 12,800 records: the writer compacts on the way
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				node := fmt.Sprintf("n%d-%d", w, i)
				if err := j.Begin(context.Background(), intent(node, "L")); err != nil {
					errs <- err
					return
				}
				if i%100 != 0 { // one in a hundred stays open
					j.End(node, "L")
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	j.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(data), "\n"); lines > 4096+workers*each/50 {
		t.Errorf("the journal holds %d lines for %d open intents: it was not compacted", lines, workers*each/100)
	}
	j2, left := open(t, path)
	defer j2.Close()
	if len(left) != workers*each/100 {
		t.Fatalf("%d intents open after the run, want %d", len(left), workers*each/100)
	}
}

func BenchmarkJournal_BeginEnd(b *testing.B) {
	j, _, err := journal.Open(filepath.Join(b.TempDir(), "journal"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	b.SetParallelism(32) // 64 workers on 2 cores
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			node := fmt.Sprintf("n%p-%d", pb, i)
			if err := j.Begin(context.Background(), intent(node, "L")); err != nil {
				b.Error(err)
				return
			}
			j.End(node, "L")
		}
	})
}

func TestJournal_OneEdgePerFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	j, _ := open(t, path)
	if _, _, err := journal.Open(path, nil); err == nil || !strings.Contains(err.Error(), "another edge with the same edge_name") {
		t.Fatalf("a second Open of a journal in use = %v, want it refused", err)
	}
	j.Close()
	j2, _ := open(t, path) // free again once closed
	j2.Close()
}
