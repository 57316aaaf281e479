// SPDX-License-Identifier: Apache-2.0

package testkit_test

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/testkit"
)

func TestWaitFor_ReturnsOnceEitherKindOfConditionHolds(t *testing.T) {
	var n atomic.Int32
	testkit.WaitFor(t, 5*time.Second, "three polls", func() bool { return n.Add(1) >= 3 })
	testkit.WaitFor(t, 5*time.Second, "six polls", func() (bool, string) { return n.Add(1) >= 6, "not yet" })
}

func TestLogBuffer_LoggerWritesTextLinesFromItsLevel(t *testing.T) {
	var b testkit.LogBuffer
	log := b.Logger(slog.LevelInfo)
	log.Debug("hidden")
	log.Info("shown", "node", "n1")
	if !b.Contains("msg=shown node=n1") || b.Contains("hidden") {
		t.Fatalf("log: %q", b.String())
	}
	if tail := b.Tail(5); len(tail) != 5 {
		t.Fatalf("tail %q", tail)
	}
}

func TestCA_IssuesWhatItsClientTrusts(t *testing.T) {
	ca := testkit.NewCA(t, "test CA")
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Issue(t, "server", x509.ExtKeyUsageServerAuth)}}
	srv.StartTLS()
	defer srv.Close()
	resp, err := ca.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := (&http.Client{}).Get(srv.URL); err == nil {
		t.Fatal("a client without the CA trusted its certificate")
	}
}

func TestPercentile_NearestRankOfTheSortedDurations(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	if got := testkit.Percentile(d, 0.5); got != 51*time.Millisecond {
		t.Errorf("p50 of 1..100 ms = %v, want 51ms (nearest rank, from 0)", got)
	}
	if got := testkit.Percentile(d, 0.99); got != 100*time.Millisecond {
		t.Errorf("p99 of 1..100 ms = %v, want 100ms", got)
	}
	if got := testkit.Percentile(d[:3], 0.99); got != 3*time.Millisecond {
		t.Errorf("p99 of three = %v, want the largest", got)
	}
	if got := testkit.Percentile(nil, 0.5); got != 0 {
		t.Errorf("p50 of none = %v, want 0", got)
	}
}

func TestMissing_ListsWhatTheOtherLacksInOrder(t *testing.T) {
	if got := testkit.Missing([]string{"c", "a", "b", "a"}, []string{"b"}); !slices.Equal(got, []string{"c", "a", "a"}) {
		t.Errorf("Missing = %v, want [c a a]", got)
	}
	if got := testkit.Missing([]string{"a"}, []string{"a", "b"}); got != nil {
		t.Errorf("Missing = %#v, want nil", got)
	}
}

func TestIsolateEnv_ClearsThePrefixAndHidesHome(t *testing.T) {
	t.Setenv("TESTKIT_ISOLATE_A", "a")
	t.Setenv("TESTKIT_OTHER", "kept")
	home := os.Getenv("HOME")
	testkit.IsolateEnv(t, "TESTKIT_ISOLATE_")
	if v := os.Getenv("TESTKIT_ISOLATE_A"); v != "" {
		t.Errorf("TESTKIT_ISOLATE_A = %q, want it cleared", v)
	}
	if v := os.Getenv("TESTKIT_OTHER"); v != "kept" {
		t.Errorf("TESTKIT_OTHER = %q, want it kept", v)
	}
	if h := os.Getenv("HOME"); h == "" || h == home {
		t.Errorf("HOME = %q, want a new empty directory", h)
	} else if entries, err := os.ReadDir(h); err != nil || len(entries) != 0 {
		t.Errorf("HOME %s: %d entries, %v", h, len(entries), err)
	}
}

func TestSilent_AnswersUntilCutThenHoldsTheRequest(t *testing.T) {
	s := testkit.NewSilent(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	resp, err := http.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if s.Calls() != 0 {
		t.Fatalf("calls before the cut = %d, want 0", s.Calls())
	}
	s.Cut()
	c := &http.Client{Timeout: 200 * time.Millisecond}
	if resp, err := c.Get(s.URL); err == nil {
		resp.Body.Close()
		t.Fatal("a cut member answered")
	}
	testkit.WaitFor(t, 5*time.Second, "the held request counted", func() bool { return s.Calls() == 1 })
}
